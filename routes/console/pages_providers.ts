// Publishing providers from the browser: add one (name, architecture, default, optional URL and checksum),
// delete one (confirmed), and prepare an upload of its file with the registry's own upload preparation.

import { ApiError } from "../../lib/errors.ts";
import { json } from "../../lib/http.ts";
import { httpErrorOf } from "../../lib/store_http.ts";
import { createProvider, deleteProvider } from "../registry/services/providers.ts";
import { actor, type ConsoleReq, errorMessages } from "./context.ts";
import { type PreparedUpload, prepareUpload, type Uploads } from "../registry/services/uploads.ts";
import { checked, field, signedInForm } from "./forms.ts";
import { html } from "./html.ts";
import { page } from "./layout.ts";
import {
  confirmPage,
  providerPath,
  requireSignedIn,
  versionHref,
  versionPath,
  write,
} from "./pages_publish.ts";

export async function createProviderPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const provider: Record<string, unknown> = {
    name: field(form, "name"),
    architecture: field(form, "architecture") || "unknown",
    default_architecture: checked(form, "default_architecture"),
  };
  if (field(form, "url")) provider.url = field(form, "url");
  if (field(form, "checksum_type") || field(form, "checksum")) {
    provider.checksum_type = field(form, "checksum_type");
    provider.checksum = field(form, "checksum");
  }
  return await write(
    c,
    () => createProvider(actor(c), versionPath(c), provider),
    () => versionHref(c),
    "Provider added: upload its file below.",
    versionHref(c),
  );
}

export function deleteProviderConfirm(c: ConsoleReq): Response {
  requireSignedIn(c);
  const what = `${c.ctx.params.provider} (${c.ctx.params.arch})`;
  return confirmPage(
    c,
    `Delete provider ${what}?`,
    "The provider and its file are deleted from this version.",
    c.ctx.url.pathname,
    `Delete ${what}`,
    versionHref(c),
  );
}

export async function deleteProviderPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  return await write(
    c,
    () => deleteProvider(actor(c), providerPath(c)),
    () => versionHref(c),
    "Provider deleted.",
    versionHref(c),
  );
}

/**
 * Prepares an upload exactly as GET …/provider/:p/:arch/upload does. The page's script asks for JSON and PUTs
 * the file to `upload_path` with a progress bar; without JavaScript the page shows the URL and a curl command.
 */
export function prepareUploadPost(uploads: Uploads) {
  return async (c: ConsoleReq): Promise<Response> => {
    await signedInForm(c);
    const wantsJson = (c.ctx.request.headers.get("accept") ?? "").includes("application/json");
    let prepared: PreparedUpload;
    try {
      prepared = await prepareUpload(actor(c), uploads, providerPath(c), "standard");
    } catch (thrown) {
      const err = httpErrorOf(thrown);
      if (!(err instanceof ApiError) || !wantsJson) throw err;
      return json({ errors: errorMessages(err), success: false }, err.status);
    }
    if (wantsJson) {
      return json({ upload_path: prepared.upload_path, done: versionHref(c) }, 200, {
        "Cache-Control": "no-store",
      });
    }
    const body = html`
      <p><a href="${versionHref(c)}">← back to the version</a></p>
      <h1>Upload the file</h1>
      <p>This page needs no JavaScript: upload the box file with curl within ${Math.round(
        c.reg.settings.uploadUrlTtlMs / 60_000,
      )} minutes, then go back to the version.</p>
      <pre id="upload-command">curl --fail --upload-file ./package.box '${prepared.upload_path}'</pre>
      <p class="hint">The address works once and is secret: do not share it.</p>
    `;
    return page(c, { title: "Upload", body, headers: { "Cache-Control": "no-store" } });
  };
}
