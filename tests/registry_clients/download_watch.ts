// Records how the test server's blob store answered the downloads a real client made (status, and where a 302
// sent it), so the client tests can show that `vagrant box add` followed a redirect to the object store.

import { assert } from "../helpers/assert.ts";
import type { TestServer } from "../helpers/server.ts";
import { testDownloadsRedirect } from "../helpers/storage_backend.ts";

export interface DownloadAnswer {
  method: string;
  path: string;
  status: number;
  /** The origin a 302 named, if any. */
  redirectedTo?: string;
}

/** Wraps the server's blob store's answers to downloads; they accumulate in the returned list. */
export function watchDownloads(server: TestServer): DownloadAnswer[] {
  const answers: DownloadAnswer[] = [];
  const blobs = server.server.data.blobs;
  const respond = blobs.respond.bind(blobs);
  blobs.respond = async (sha256, request, headers, options) => {
    const response = await respond(sha256, request, headers, options);
    const location = response.headers.get("Location");
    answers.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      ...(location ? { redirectedTo: new URL(location).origin } : {}),
    });
    return response;
  };
  return answers;
}

/**
 * Asserts that a hosted file was handed out the way this run's backend does it: a 302 to the object store (not
 * to wharf) with WHARF_TEST_DOWNLOADS=redirect, else served by wharf itself (200).
 */
export function assertHostedDownload(answers: DownloadAnswer[], server: TestServer, what: string): void {
  const gets = answers.filter((a) => a.method === "GET");
  const ownOrigin = new URL(server.url).origin;
  const shown = JSON.stringify(gets);
  if (testDownloadsRedirect) {
    assert(
      gets.some((a) => a.status === 302 && a.redirectedTo && a.redirectedTo !== ownOrigin),
      `${what}: no 302 to the object store among ${shown}`,
    );
  } else {
    assert(gets.some((a) => a.status === 200), `${what}: no file served among ${shown}`);
  }
}
