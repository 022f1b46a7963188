// A large box through wharf to an S3-compatible store (OpenStack Swift s3api) against the AWS SDK copying the
// same file straight to and from the bucket, in the same run: upload (curl -T to the upload URL) vs the SDK's
// multipart Upload, download streamed by wharf (WHARF_DOWNLOADS=proxy) and through the 302 to the presigned URL
// vs the SDK's GetObject; the nodes' peak RSS shows the file is streamed, not buffered.
// Run: deno run -A bench/scale_transfer.ts (needs Debian's postgresql and swift*; BENCH_SCALE_FILE_MIB, 1024).

import { median } from "./lib.ts";
import { createReadStream } from "node:fs";
import { GetObjectCommand } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { createS3Client } from "../lib/store/s3/client.ts";
import { startPostgres } from "../tests/fixtures/postgres.ts";
import { startSwift } from "../tests/fixtures/swift.ts";
import { type ChildServer, spawnServer } from "../tests/helpers/server.ts";
import { ADMIN_PASSWORD, RegistryApi } from "../tests/registry_clients/registry_api.ts";
import { createBigBox, peakRssMiB, timeShell } from "./registry_server.ts";

const fileMiB = Number(Deno.env.get("BENCH_SCALE_FILE_MIB") ?? 1024);
const rounds = Number(Deno.env.get("BENCH_TRANSFER_ROUNDS") ?? 2);
const rootKey = btoa(String.fromCharCode(...new Uint8Array(32).fill(9)));
const bucket = "wharf-bench-transfer";

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return (performance.now() - started) / 1000;
}

const pg = await startPostgres();
const swift = await startSwift();
const dir = await Deno.makeTempDir({ prefix: "wharf-bench-scale-transfer-" });
const nodes: ChildServer[] = [];
try {
  const env = {
    WHARF_DATABASE_URL: await pg.createDatabase(),
    WHARF_ROOT_KEY: rootKey,
    WHARF_REGISTRY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    WHARF_RATE_LIMIT_RPS: "0",
    WHARF_MAX_UPLOAD_BYTES: String(64 * 1024 ** 3),
    ...swift.env(bucket),
  };
  // Two nodes on one database and bucket: one streams downloads itself, one redirects to presigned URLs.
  const proxy = await spawnServer(`${dir}/a`, { ...env, WHARF_DOWNLOADS: "proxy", WHARF_NODE_NAME: "proxy" });
  nodes.push(proxy);
  const redirect = await spawnServer(`${dir}/b`, {
    ...env,
    WHARF_DOWNLOADS: "redirect",
    WHARF_NODE_NAME: "redirect",
  });
  nodes.push(redirect);

  const file = `${dir}/big.box`;
  await timeShell(`head -c ${fileMiB}M /dev/urandom > '${file}'`);
  const api = new RegistryApi(proxy.url);
  const admin = await api.login("admin", ADMIN_PASSWORD);
  await api.createUser(admin, "alice", "alice-password-1");
  const token = await api.login("alice", "alice-password-1");
  const B = await createBigBox(api, token);
  const path = "/alice/boxes/bigbox/versions/1.0.0/providers/virtualbox.box";

  const s3 = createS3Client({
    WHARF_S3_ENDPOINT: swift.endpoint,
    WHARF_S3_REGION: swift.region,
    AWS_ACCESS_KEY_ID: swift.accessKeyId,
    AWS_SECRET_ACCESS_KEY: swift.secretAccessKey,
  });
  const sdkUpload = () =>
    new Upload({
      client: s3,
      params: { Bucket: bucket, Key: "direct/big.box", Body: createReadStream(file) },
      partSize: 8 * 1024 * 1024,
    }).done();
  const sdkDownload = async () => {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: "direct/big.box" }));
    const body = out.Body!.transformToWebStream();
    const sink = await Deno.open("/dev/null", { write: true });
    await body.pipeTo(sink.writable);
  };

  const results: Record<string, number>[] = [];
  for (let round = 0; round < rounds; round++) {
    const r: Record<string, number> = {};
    r.sdkUpload = await timed(sdkUpload);
    const prepared = await api.expectOk("GET", `${B}/version/1.0.0/provider/virtualbox/upload`, { token });
    r.upload = await timeShell(`curl -sS --fail -T '${file}' '${prepared.upload_path}' -o /dev/null`);
    if (round === 0) await api.expectOk("PUT", `${B}/version/1.0.0/release`, { token });
    r.sdkDownload = await timed(sdkDownload);
    r.proxy = await timeShell(`curl -sS --fail -o /dev/null '${proxy.url}${path}'`);
    r.redirect = await timeShell(`curl -sS --fail -L -o /dev/null '${redirect.url}${path}'`);
    results.push(r);
  }
  const rate = (s: number) => fileMiB / s;
  const m = (k: string) => median(results.map((r) => r[k]!));
  console.log(`# ${fileMiB} MiB box through wharf to Swift s3api vs the AWS SDK direct, ${rounds} rounds`);
  console.log(`# ${new Date().toISOString()}, deno ${Deno.version.deno}\n`);
  console.log(
    `upload: wharf (curl -T) ${rate(m("upload")).toFixed(0)} MiB/s, SDK Upload ${
      rate(m("sdkUpload")).toFixed(0)
    } ` +
      `MiB/s: ${(m("sdkUpload") / m("upload")).toFixed(2)}×`,
  );
  console.log(
    `download, proxied by wharf: ${rate(m("proxy")).toFixed(0)} MiB/s, SDK GetObject ${
      rate(m("sdkDownload")).toFixed(0)
    } MiB/s: ${(m("sdkDownload") / m("proxy")).toFixed(2)}×`,
  );
  console.log(
    `download, 302 to the presigned URL (curl -L): ${rate(m("redirect")).toFixed(0)} MiB/s: ${
      (m("sdkDownload") / m("redirect")).toFixed(2)
    }×`,
  );
  console.log(
    `peak RSS: proxy node (upload + proxied downloads) ${peakRssMiB(proxy.process.pid).toFixed(0)} MiB, ` +
      `redirect node ${peakRssMiB(redirect.process.pid).toFixed(0)} MiB`,
  );
  for (const [i, r] of results.entries()) {
    console.log(
      `round ${i + 1}: ${Object.entries(r).map(([k, s]) => `${k} ${rate(s).toFixed(0)} MiB/s`).join(", ")}`,
    );
  }
  console.log(`load average ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`);
} finally {
  for (const n of nodes) {
    n.kill("SIGTERM");
    await n.status;
  }
  await swift.stop();
  await pg.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
