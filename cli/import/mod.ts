// `wharf registry import`: every box of the namespaces or boxes named, from a Vagrant registry into a running
// wharf, resumable and verified. Reads options, finds the boxes, syncs each one, prints the report.

import { ApiFailure, RegistryApi, sourceCredentials, staticToken } from "./http.ts";
import { importUsage, ImportUsageError, parseImportOptions } from "./options.ts";
import { Progress } from "./progress.ts";
import { ImportReport } from "./report.ts";
import { detectApi, SourceReader } from "./source.ts";
import { message, syncBox } from "./sync.ts";
import { HistorySync } from "./history.ts";

export interface ImportIo {
  /** One line to stdout (the summary, or the JSON report). */
  stdout(text: string): void;
  /** Raw text to stderr (progress; redrawn in place when it is a terminal). */
  writeStderr(text: string): void;
  stderrIsTerminal: boolean;
  env: Readonly<Record<string, string>>;
}

/** At most `n` of the works given run at once. */
function limiter(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    while (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await work();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/** Runs the import; returns the exit code (0 done, 1 something failed, 2 bad usage). */
export async function runImport(args: readonly string[], io: ImportIo): Promise<number> {
  let options;
  try {
    options = parseImportOptions(args, io.env);
  } catch (err) {
    if (!(err instanceof ImportUsageError)) throw err;
    io.writeStderr(`wharf registry import: ${err.message}\n${importUsage}\n`);
    return 2;
  }
  if (options === "help") {
    io.stdout(importUsage);
    return 0;
  }
  const report = new ImportReport();
  report.source = options.from;
  report.target = options.server;
  report.dry_run = options.dryRun;
  const progress = new Progress({
    write: (t) => io.writeStderr(t),
    terminal: io.stderrIsTerminal && !options.json,
  });
  try {
    if (!options.token) throw new ApiFailure(0, "the target needs a token: --token or WHARF_REGISTRY_TOKEN");
    const target = new RegistryApi(options.server, "target", staticToken(options.token));
    await target.call("GET", "/api/v1/authenticate");
    const credentials = sourceCredentials(options.sourceAuth);
    const source = new RegistryApi(options.from, "source", credentials);
    const reader = new SourceReader(source, await detectApi(source));
    report.source_api = reader.version;
    progress.line(`source ${new URL(options.from).origin} speaks API v${reader.version}`);
    const boxes: { src: { namespace: string; name: string }; dest: { namespace: string; name: string } }[] =
      [];
    for (const s of options.selections) {
      const names = s.source.name ? [s.source.name] : await reader.boxNames(s.source.namespace);
      for (const name of names) {
        const dest = { namespace: s.target.namespace, name: s.target.name ?? name };
        if (!boxes.some((b) => b.dest.namespace === dest.namespace && b.dest.name === dest.name)) {
          boxes.push({ src: { namespace: s.source.namespace, name }, dest });
        }
      }
    }
    const history = new HistorySync(target, report);
    const ctx = {
      target,
      report,
      progress,
      dryRun: options.dryRun,
      copyExternal: options.copyExternal,
      history,
      sourceOrigin: new URL(options.from).origin,
      sourceCredentials: credentials,
      slot: limiter(options.parallel),
    };
    const boxSlot = limiter(options.parallel);
    await Promise.all(boxes.map((b) =>
      boxSlot(async () => {
        const tag = `${b.src.namespace}/${b.src.name}`;
        try {
          const src = await reader.box(b.src.namespace, b.src.name);
          if (!src) throw new ApiFailure(404, `${tag} not found on the source (or not visible to its token)`);
          await syncBox(ctx, src, b.dest);
        } catch (err) {
          report.fail({ box: tag, error: message(err) });
        }
      })
    ));
  } catch (err) {
    report.fail({ box: "*", error: message(err) });
  } finally {
    progress.close();
  }
  io.stdout(options.json ? JSON.stringify(report.toJSON(), null, 2) : report.summary());
  return report.failures.length ? 1 : 0;
}
