// Registry large-file transfer: a BENCH_REGISTRY_FILE_MIB (256; 1024 by hand) box uploaded the way vagrant
// does (curl -T to the standard upload URL) against dd with fsync, downloaded with curl against cat, on the
// same disk, in BENCH_TRANSFER_ROUNDS (3) interleaved rounds; reports the server's peak RSS to show the file
// is streamed, not buffered.

import type { Figure } from "../lib.ts";
import { createBigBox, peakRssMiB, startBenchRegistry, timeShell } from "../registry_server.ts";

const fileMiB = Number(Deno.env.get("BENCH_REGISTRY_FILE_MIB") ?? 256);
const roundCount = Number(Deno.env.get("BENCH_TRANSFER_ROUNDS") ?? 3);

export default async function run(): Promise<{ title: string; figures: Figure[]; notes: string[] }> {
  const registry = await startBenchRegistry({ WHARF_MAX_UPLOAD_BYTES: String(64 * 1024 ** 3) });
  try {
    const { api, token, server, dir } = registry;
    const file = `${dir}/big.box`;
    await timeShell(`head -c ${fileMiB}M /dev/urandom > '${file}'`);

    const B = await createBigBox(api, token);
    const url = `${server.url}/alice/boxes/bigbox/versions/1.0.0/providers/virtualbox.box`;
    const peakBefore = peakRssMiB(server.process.pid);
    // Rounds interleave each transfer with its baseline so both see the same machine state.
    const rounds: { dd: number; upload: number; cat: number; download: number }[] = [];
    for (let round = 0; round < roundCount; round++) {
      const dd = await timeShell(`dd if='${file}' of='${dir}/dd-copy' bs=1M conv=fsync status=none`);
      await Deno.remove(`${dir}/dd-copy`);
      const prepared = await api.expectOk("GET", `${B}/version/1.0.0/provider/virtualbox/upload`, { token });
      const upload = await timeShell(`curl -sS --fail -T '${file}' '${prepared.upload_path}' -o /dev/null`);
      if (round === 0) await api.expectOk("PUT", `${B}/version/1.0.0/release`, { token });
      const cat = await timeShell(`cat '${file}' > /dev/null`);
      const download = await timeShell(`curl -sS --fail -o /dev/null '${url}'`);
      rounds.push({ dd, upload, cat, download });
    }
    const peakAfter = peakRssMiB(server.process.pid);

    const mibPerSec = (s: number) => fileMiB / s;
    const median = (key: keyof (typeof rounds)[number]) => {
      const sorted = rounds.map((r) => r[key]).sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)]!;
    };
    const perRound = rounds.map((r, i) =>
      `round ${i + 1}: upload ${mibPerSec(r.upload).toFixed(0)} vs dd ${mibPerSec(r.dd).toFixed(0)} MiB/s (${
        (r.dd / r.upload).toFixed(2)
      }×), download ${mibPerSec(r.download).toFixed(0)} vs cat ${mibPerSec(r.cat).toFixed(0)} MiB/s (${
        (r.cat / r.download).toFixed(2)
      }×)`
    );
    const uploadSeconds = median("upload");
    const ddSeconds = median("dd");
    const downloadSeconds = median("download");
    const catSeconds = median("cat");
    return {
      title: `Registry upload and download of a ${fileMiB} MiB box`,
      figures: [
        {
          name: "upload (curl -T, standard upload, fsync'd), median",
          value: mibPerSec(uploadSeconds),
          unit: "MiB/s",
          baseline: { name: "dd conv=fsync", value: mibPerSec(ddSeconds) },
        },
        {
          name: "download (curl -o /dev/null), median",
          value: mibPerSec(downloadSeconds),
          unit: "MiB/s",
          baseline: { name: "cat > /dev/null", value: mibPerSec(catSeconds) },
        },
        { name: "server peak RSS after both transfers", value: peakAfter, unit: "MiB" },
      ],
      notes: [
        `median of ${roundCount} interleaved rounds (dd, upload, cat, download); per round:`,
        ...perRound.map((line) => `  ${line}`),
        `server peak RSS before the transfers: ${peakBefore.toFixed(0)} MiB`,
        `upload: \`curl -sS --fail -T big.box <upload_path>\`; download: \`curl -sS --fail -o /dev/null <download_url>\``,
        `load average at the end: ${Deno.loadavg().map((l) => l.toFixed(1)).join(" ")}`,
      ],
    };
  } finally {
    await registry.close();
  }
}
