// Standard and direct uploads, checksums, limits and expiry (docs/registry.md#uploads-and-limits).

import { assert, assertEquals, assertMatch } from "../helpers/assert.ts";
import { createHash } from "node:crypto";
import { sha256Hex } from "../../lib/crypto.ts";
import { createUser, type Fixture, registryTest } from "./helpers.ts";
import { loggedEvents, settledUploadLeftovers } from "../helpers/stored.ts";

const V = "/api/v1/box/alice/devbox/version/1.0.0";
const P = `${V}/provider/virtualbox`;
const DL = "/alice/boxes/devbox/versions/1.0.0/providers/virtualbox.box";

interface UploadSetup {
  /** WHARF_* settings for the server. */
  env?: Record<string, string>;
  /** Extra fields of the provider alice/devbox 1.0.0 virtualbox. */
  provider?: Record<string, unknown>;
}
type UploadTestBody = (f: Fixture, alice: string) => Promise<void>;

/** A registry test with alice's box, version and provider (no file yet) made before `fn` runs. */
function uploadTest(name: string, fn: UploadTestBody): void;
function uploadTest(name: string, setup: UploadSetup, fn: UploadTestBody): void;
function uploadTest(name: string, setupOrFn: UploadSetup | UploadTestBody, fn?: UploadTestBody): void {
  const [setup, body] = typeof setupOrFn === "function" ? [{}, setupOrFn] : [setupOrFn, fn!];
  registryTest(name, setup.env ?? {}, async (f) => {
    const alice = await createUser(f, "alice");
    await f.api.post("/api/v1/boxes", { name: "devbox", is_private: false }, { token: alice });
    await f.api.post("/api/v1/box/alice/devbox/versions", { version: { version: "1.0.0" } }, {
      token: alice,
    });
    const provider = { name: "virtualbox", ...setup.provider };
    await f.api.post(`${V}/providers`, { provider }, { token: alice });
    await body(f, alice);
  });
}

function bytes(n: number, seed = 1): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

function chunked(data: Uint8Array): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= data.length) return c.close();
      c.enqueue(data.slice(sent, sent + 4096));
      sent += 4096;
    },
  });
}

async function putBytes(
  url: string,
  body: BodyInit,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(url, { method: "PUT", body });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : {} };
}

async function prepare(f: Fixture, token: string, direct = false) {
  const r = await f.api.get(`${P}/upload${direct ? "/direct" : ""}`, { token });
  assertEquals(r.status, 200, r.text);
  return r.body as { upload_path: string; callback?: string };
}

async function curlPut(url: string, file: string): Promise<{ status: number; stderr: string }> {
  const out = await new Deno.Command("curl", {
    args: [
      "-s",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      "Expect: 100-continue",
      "--request",
      "PUT",
      "--upload-file",
      file,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    status: Number(new TextDecoder().decode(out.stdout)),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

/** The sha256 of the provider file as a writer downloads it (the version is unreleased). */
async function download(f: Fixture, token: string): Promise<string> {
  const r = await fetch(f.srv.url + DL, { headers: { Authorization: `Bearer ${token}` } });
  assertEquals(r.status, 200);
  return sha256Hex(new Uint8Array(await r.arrayBuffer()));
}

uploadTest(
  "a standard upload streams a chunked PUT without credentials and consumes its id",
  async (f, alice) => {
    const { upload_path } = await prepare(f, alice);
    assertMatch(upload_path, /\/api\/v1\/uploads\/[A-Za-z0-9_-]{43}$/);
    const data = bytes(300_000);
    const r = await putBytes(upload_path, chunked(data));
    assertEquals(r.status, 200, JSON.stringify(r.body));
    assertEquals(r.body.hosted, true);
    assertEquals(r.body.url, null);
    assertEquals((await putBytes(upload_path, "again")).status, 404);
    assertEquals(await download(f, alice), sha256Hex(data));
    const uploaded = (await loggedEvents(f.srv)).find((e) => e.Type === "ProviderUploaded")!;
    const payload = uploaded.Payload as Record<string, unknown>;
    assertEquals([payload.size, payload.sha256, payload.mode], [data.length, sha256Hex(data), "standard"]);
    assert(!JSON.stringify(uploaded).includes(upload_path.split("/").pop()!));
  },
);

uploadTest("curl uploads with Expect: 100-continue; oversize is refused with 413 and leaves no temp file", {
  env: { WHARF_MAX_UPLOAD_BYTES: "100000" },
}, async (f, alice) => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/small.box`, bytes(50_000));
    await Deno.writeFile(`${dir}/big.box`, bytes(200_000));
    const big = await curlPut((await prepare(f, alice)).upload_path, `${dir}/big.box`);
    assertEquals(big.status, 413, big.stderr);
    const chunkedBig = await putBytes((await prepare(f, alice)).upload_path, chunked(bytes(200_000)));
    assertEquals(chunkedBig.status, 413);
    const small = await curlPut((await prepare(f, alice)).upload_path, `${dir}/small.box`);
    assertEquals(small.status, 200, small.stderr);
    assertEquals(await settledUploadLeftovers(f.srv), []);
    const empty = await putBytes((await prepare(f, alice)).upload_path, "");
    assertEquals(empty.status, 422);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

uploadTest("an upload URL not used within WHARF_UPLOAD_URL_TTL is gone (404)", {
  env: { WHARF_UPLOAD_URL_TTL: "200ms" },
}, async (f, alice) => {
  const { upload_path } = await prepare(f, alice);
  await new Promise((r) => setTimeout(r, 300));
  const late = await putBytes(upload_path, "data");
  assertEquals(late.status, 404);
  assertEquals(late.body.errors, ["Resource not found!"]);
  assertEquals((await putBytes(`${f.srv.url}/api/v1/uploads/unknown`, "x")).status, 404);
});

uploadTest(
  "a direct upload stages the file until the authenticated callback makes it hosted",
  async (f, alice) => {
    const direct = await prepare(f, alice, true);
    const callbackPath = new URL(direct.callback!).pathname;
    assertMatch(
      callbackPath,
      /^\/api\/v1\/box\/alice\/devbox\/version\/1\.0\.0\/provider\/virtualbox\/upload\/direct\/[A-Za-z0-9_-]{43}$/,
    );
    const early = await f.api.put(callbackPath, undefined, {
      token: alice,
      headers: { "Content-Type": "application/json" },
    });
    assertEquals(early.status, 422);
    assertEquals(early.body.errors, ["No file has been uploaded yet"]);
    const put = await putBytes(direct.upload_path, bytes(10_000));
    assertEquals(put.status, 200);
    assertEquals(put.body.hosted, false);
    assertEquals((await f.api.put(callbackPath, undefined)).status, 401);
    const done = await f.api.put(callbackPath, undefined, { token: alice });
    assertEquals(done.status, 200, done.text);
    assertEquals(done.body.hosted, true);
    assertEquals((await f.api.put(callbackPath, undefined, { token: alice })).status, 404);
    const uploaded = (await loggedEvents(f.srv)).filter((e) => e.Type === "ProviderUploaded");
    assertEquals(uploaded.length, 1);
    assertEquals((uploaded[0]!.Payload as Record<string, unknown>).mode, "direct");
  },
);

/** The file the checksum test declares up front (its checksum is set when the provider is created). */
const checksummedFile = bytes(20_000, 1);
uploadTest("a checksum mismatch is 422, keeps the previous file and leaves nothing behind", {
  provider: { checksum: sha256Hex(checksummedFile), checksum_type: "sha256" },
}, async (f, alice) => {
  assertEquals((await putBytes((await prepare(f, alice)).upload_path, checksummedFile)).status, 200);
  const other = bytes(20_000, 2);
  const bad = await putBytes((await prepare(f, alice)).upload_path, other);
  assertEquals(bad.status, 422);
  assertEquals(
    (bad.body.errors as string[])[0],
    `Checksum mismatch: expected sha256 ${sha256Hex(checksummedFile)}, got ${sha256Hex(other)}`,
  );
  assertEquals(await download(f, alice), sha256Hex(checksummedFile));
  assertEquals(await settledUploadLeftovers(f.srv), []);
  const direct = await prepare(f, alice, true);
  assertEquals((await putBytes(direct.upload_path, other)).status, 422);
  const setWrong = await f.api.put(P, { checksum: "0".repeat(32), checksum_type: "md5" }, { token: alice });
  assertEquals(setWrong.status, 422);
  const md5 = createHash("md5").update(checksummedFile).digest("hex");
  const setRight = await f.api.put(P, { checksum: md5, checksum_type: "MD5" }, { token: alice });
  assertEquals(setRight.status, 200, setRight.text);
});

uploadTest("deleting the target provider voids its upload ids", async (f, alice) => {
  const { upload_path } = await prepare(f, alice);
  await f.api.delete(P, { token: alice });
  assertEquals((await putBytes(upload_path, "data")).status, 404);
});

uploadTest("concurrent uploads to one provider each succeed, one wins, orphans are collected", {
  env: { WHARF_REGISTRY_ORPHAN_GRACE: "0" },
}, async (f, alice) => {
  const files = [1, 2, 3].map((s) => bytes(200_000 + s, s));
  const paths = await Promise.all(files.map(() => prepare(f, alice)));
  const answers = await Promise.all(files.map((data, i) => putBytes(paths[i]!.upload_path, chunked(data))));
  assertEquals(answers.map((a) => a.status), [200, 200, 200]);
  const got = await download(f, alice);
  assert(files.some((d) => sha256Hex(d) === got));
  // The losers' blobs are released and collected (the blob store is asked: a data dir or a bucket).
  const stored = async () => {
    const kept: string[] = [];
    for (const d of files) if (await f.srv.server.data.blobs.has(sha256Hex(d))) kept.push(sha256Hex(d));
    return kept;
  };
  let blobs: string[] = [];
  for (let i = 0; i < 150; i++) {
    await f.api.put(`${V}/release`, undefined, { token: alice });
    blobs = await stored();
    if (blobs.length === 1) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assertEquals(blobs, [got]);
});

uploadTest("a download in flight during a re-upload still gets the whole old file", {
  env: { WHARF_REGISTRY_ORPHAN_GRACE: "0" },
}, async (f, alice) => {
  const old = bytes(3_000_000, 5);
  await putBytes((await prepare(f, alice)).upload_path, old);
  const response = await fetch(f.srv.url + DL, { headers: { Authorization: `Bearer ${alice}` } });
  const reader = response.body!.getReader();
  const first = await reader.read();
  assertEquals((await putBytes((await prepare(f, alice)).upload_path, bytes(1000, 9))).status, 200);
  await new Promise((r) => setTimeout(r, 200));
  const parts = [first.value!];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) all.set(p, (o += p.length) - p.length);
  assertEquals(sha256Hex(all), sha256Hex(old));
});

uploadTest("uploads into a delinquent namespace are refused with 402 at every step", async (f, alice) => {
  const { upload_path } = await prepare(f, alice);
  const direct = await prepare(f, alice, true);
  assertEquals((await putBytes(direct.upload_path, bytes(100))).status, 200);
  await f.api.put("/api/v1/admin/users/alice", { delinquent: true }, { token: f.admin });
  const put = await putBytes(upload_path, bytes(100));
  assertEquals(put.status, 402);
  assertEquals(put.body.errors, ["Namespace 'alice' is delinquent on billing; writes are disabled!"]);
  assertEquals((await f.api.get(`${P}/upload`, { token: alice })).status, 402);
  assertEquals(
    (await f.api.put(new URL(direct.callback!).pathname, undefined, { token: alice })).status,
    402,
  );
  // The id survives a refused PUT: it works once the namespace is in good standing again.
  await f.api.put("/api/v1/admin/users/alice", { delinquent: false }, { token: f.admin });
  assertEquals((await putBytes(upload_path, bytes(100))).status, 200);
});

uploadTest(
  "a replaced file is collected right after the commit, and writes do not rescan the blob folder",
  // On S3 a removal also spares blobs modified within WHARF_S3_REMOVAL_GRACE (docs/scale-out.md): none here,
  // but Swift's modification times are rounded up to the second, so there it may take up to ~2.5 s.
  { env: { WHARF_S3_REMOVAL_GRACE: "0s" } },
  async (f, alice) => {
    // The default grace (10 s) applies to the full scan only: a blob that just lost its reference goes at once.
    const first = bytes(50_000, 3);
    assertEquals((await putBytes((await prepare(f, alice)).upload_path, first)).status, 200);
    const deno = Deno as unknown as { readDir: typeof Deno.readDir };
    const realReadDir = deno.readDir;
    let scans = 0;
    deno.readDir = (path: string | URL) => {
      if (String(path).startsWith(`${f.srv.dataDir}/blobs`)) scans++;
      return realReadDir(path);
    };
    try {
      assertEquals((await putBytes((await prepare(f, alice)).upload_path, bytes(40_000, 4))).status, 200);
      for (let i = 0; i < 20; i++) {
        const r = await f.api.put(`${V}`, { version: { description: `edit ${i}` } }, { token: alice });
        assertEquals(r.status, 200, r.text);
      }
      let gone = false;
      for (let i = 0; i < 100 && !gone; i++) {
        gone = !(await f.srv.server.data.blobs.has(sha256Hex(first)));
        if (!gone) await new Promise((r) => setTimeout(r, 50));
      }
      assert(gone, "the replaced file is still there after 5 s");
    } finally {
      deno.readDir = realReadDir;
    }
    assertEquals(scans, 0, "registry writes scanned the blob folder");
  },
);
