// One box brought in line with its source on the target: the box, each version and provider, the files
// (through the shared copy pool), then statuses and history. Only what is missing or different is written,
// nothing is ever deleted, so a second run does nothing and an interrupted one is finished by the next.

import { ApiFailure, openFile, type RegistryApi } from "./http.ts";
import { type CopyContext, copyFile, type FileCopy, remoteSize } from "./copy.ts";
import type { Progress } from "./progress.ts";
import type { ImportReport } from "./report.ts";
import type { SourceBox, SourceProvider, SourceVersion } from "./source.ts";
import { HistorySync } from "./history.ts";

type Json = Record<string, unknown>;
const seg = encodeURIComponent;

export interface SyncContext extends CopyContext {
  target: RegistryApi;
  report: ImportReport;
  progress: Progress;
  dryRun: boolean;
  copyExternal: boolean;
  history: HistorySync;
  /** Runs a file copy when one of the --parallel slots is free. */
  slot<T>(work: () => Promise<T>): Promise<T>;
}

interface TargetProvider {
  name: string;
  architecture: string;
  default_architecture: boolean;
  hosted: boolean;
  url: string | null;
  checksum?: string | null;
  checksum_type?: string | null;
  download_url?: string;
}

const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null);

/** Brings `dest` (namespace/name on the target) in line with `src`; failures go to the report. */
export async function syncBox(ctx: SyncContext, src: SourceBox, dest: { namespace: string; name: string }) {
  const tag = `${dest.namespace}/${dest.name}`;
  const boxPath = `/api/v2/box/${seg(dest.namespace)}/${seg(dest.name)}`;
  const { target, report } = ctx;
  let current = await target.call<Json>("GET", boxPath, undefined, { allow404: true });
  const fields = {
    short_description: src.short_description,
    description: src.description,
    is_private: src.private,
  };
  let changed = false;
  const created = !current;
  if (!current) {
    report.boxes.created++;
    ctx.progress.line(
      `${ctx.dryRun ? "would create" : "creating"} box ${tag}${src.private ? " (private)" : ""}`,
    );
    if (!ctx.dryRun) {
      try {
        await target.call("POST", "/api/v2/boxes", {
          box: { username: dest.namespace, name: dest.name, ...fields },
        });
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 404) {
          throw new ApiFailure(
            404,
            `namespace ${dest.namespace} does not exist on the target ` +
              `(create it first: wharf registry org create ${dest.namespace})`,
          );
        }
        throw err;
      }
      current = await target.call<Json>("GET", boxPath);
    }
  } else if (
    !same(current.short_description, src.short_description) || !same(current.description, src.description) ||
    current.private !== src.private
  ) {
    changed = true;
    if (!ctx.dryRun) await target.call("PUT", boxPath, { box: fields });
  }
  if (current && !ctx.dryRun) await ctx.history.carryDownloads(tag, src.downloads);
  const targetVersions = (current?.versions ?? []) as Json[];
  const jobs: Promise<void>[] = [];
  const failedVersions = new Set<string>();
  const plans: { sv: SourceVersion; status: string }[] = [];
  for (const sv of src.versions) {
    const fail = (provider: string | undefined, error: string) => {
      failedVersions.add(sv.version);
      report.fail({ box: tag, version: sv.version, ...(provider ? { provider } : {}), error });
    };
    try {
      const tv = await syncVersion(
        ctx,
        `${boxPath}/version/${seg(sv.version)}`,
        tag,
        sv,
        targetVersions,
        jobs,
        fail,
      );
      changed ||= tv.changed;
      plans.push({ sv, status: tv.status });
    } catch (err) {
      fail(undefined, message(err));
    }
  }
  await Promise.all(jobs);
  for (const { sv, status } of plans) {
    if (failedVersions.has(sv.version)) {
      if (status === "unreleased" && sv.status !== "unreleased") {
        report.note(
          `${tag} ${sv.version} left unreleased on the target until every file arrives (run again)`,
        );
      }
      continue;
    }
    try {
      changed = await syncStatus(ctx, `${boxPath}/version/${seg(sv.version)}`, tag, sv, status) || changed;
    } catch (err) {
      report.fail({ box: tag, version: sv.version, error: message(err) });
    }
  }
  if (current && !ctx.dryRun) await ctx.history.carryTimes(tag, src);
  if (!created && changed) report.boxes.updated++;
  else if (!created) report.boxes.unchanged++;
}

/** An error's text for the report, with every URL cut to its origin (upload ids, storage signatures). */
export function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/https?:\/\/[^\s)"'<>]+/g, (url) => {
    try {
      return new URL(url).origin + "/…";
    } catch {
      return "(a URL)";
    }
  });
}

async function syncVersion(
  ctx: SyncContext,
  versionPath: string,
  tag: string,
  sv: SourceVersion,
  targetVersions: Json[],
  jobs: Promise<void>[],
  fail: (provider: string | undefined, error: string) => void,
): Promise<{ status: string; changed: boolean }> {
  const { target, report } = ctx;
  let tv = targetVersions.find((v) => v.version === sv.version);
  let changed = false;
  if (!tv) {
    report.versions.created++;
    changed = true;
    if (!ctx.dryRun) {
      tv = await target.call<Json>("POST", versionPath.replace(/\/version\/[^/]+$/, "/versions"), {
        version: { version: sv.version, description: sv.description },
      });
    }
  } else if (!same(tv.description, sv.description)) {
    report.versions.updated++;
    changed = true;
    if (!ctx.dryRun) await target.call("PUT", versionPath, { version: { description: sv.description } });
  }
  const status = String(tv?.status ?? "unreleased");
  const providers = (tv?.providers ?? []) as TargetProvider[];
  for (const sp of sv.providers) {
    const label = `${sp.name}/${sp.architecture}`;
    try {
      const job = await syncProvider(
        ctx,
        `${versionPath}/provider/${seg(sp.name)}/${seg(sp.architecture)}`,
        sp,
        providers.find((p) => p.name === sp.name && p.architecture === sp.architecture),
        status,
        `${tag} ${sv.version} ${label}`,
      );
      changed ||= job.changed;
      if (job.copy) {
        jobs.push(runCopy(ctx, `${tag} ${sv.version} ${label}`, job.copy, job.after, (e) => fail(label, e)));
      }
    } catch (err) {
      fail(label, message(err));
    }
  }
  return { status, changed };
}

interface ProviderPlan {
  changed: boolean;
  copy?: FileCopy;
  /** Run after a successful copy (the checksum of a replaced file, set once the new file is there). */
  after?: () => Promise<unknown>;
}

async function syncProvider(
  ctx: SyncContext,
  path: string,
  sp: SourceProvider,
  tp: TargetProvider | undefined,
  versionStatus: string,
  label: string,
): Promise<ProviderPlan> {
  const { target, report } = ctx;
  const external = sp.url !== null && !sp.hosted;
  const wantsFile = sp.hosted || (external && ctx.copyExternal);
  const from = sp.hosted ? sp.download_url : sp.url;
  const copy = (): FileCopy | undefined => {
    if (!wantsFile) return undefined;
    if (!from) throw new ApiFailure(0, "the source gives no download URL");
    return { label: "", from, checksum: sp.checksum, checksum_type: sp.checksum_type, providerPath: path };
  };
  const checksum = { checksum: sp.checksum ?? "", checksum_type: sp.checksum_type ?? "" };
  if (!tp) {
    if (versionStatus === "revoked") {
      throw new ApiFailure(0, "the target's version is revoked: providers cannot be added");
    }
    report.providers.created++;
    if (!wantsFile) report.files.external_kept += external ? 1 : 0;
    if (!ctx.dryRun) {
      await target.call("POST", path.replace(/\/provider\/[^/]+\/[^/]+$/, "/providers"), {
        provider: {
          name: sp.name,
          architecture: sp.architecture,
          default_architecture: sp.default_architecture,
          ...(external && !ctx.copyExternal ? { url: sp.url } : {}),
          ...(sp.checksum ? checksum : {}),
        },
      });
    }
    return { changed: true, copy: copy() };
  }
  const full = await target.call<TargetProvider>("GET", path) ?? tp;
  const edits: Json = {};
  if (sp.default_architecture && !full.default_architecture) edits.default_architecture = true;
  if (!wantsFile && external && !full.hosted && full.url !== sp.url) edits.url = sp.url;
  const checksumDiffers = !same(full.checksum, sp.checksum) || !same(full.checksum_type, sp.checksum_type);
  let plan: ProviderPlan = { changed: false };
  if (!wantsFile) {
    if (external) report.files.external_kept++;
    if (checksumDiffers && !full.hosted) Object.assign(edits, checksum);
  } else if (!full.hosted) {
    if (checksumDiffers) Object.assign(edits, checksum);
    plan = { changed: true, copy: copy() };
  } else if (checksumDiffers || !sp.checksum) {
    // A hosted file is replaced only when it differs: by checksum, or (without one) by size and sha256.
    if (!checksumDiffers && await sameFileWithoutChecksum(ctx, label, from!, full)) {
      report.files.skipped++;
    } else {
      // The new checksum must describe the stored file: cleared now, set once the new file is in.
      if (checksumDiffers) Object.assign(edits, { checksum: "", checksum_type: "" });
      plan = {
        changed: true,
        copy: copy(),
        ...(sp.checksum ? { after: () => target.call("PUT", path, { provider: checksum }) } : {}),
      };
    }
  } else report.files.skipped++;
  if (versionStatus === "revoked" && (Object.keys(edits).length || plan.copy)) {
    throw new ApiFailure(0, "differs from the source, but the target's version is revoked and cannot change");
  }
  if (Object.keys(edits).length) {
    report.providers.updated++;
    plan.changed = true;
    if (!ctx.dryRun) await target.call("PUT", path, { provider: edits });
  }
  return plan;
}

/**
 * Without a source checksum: the same size, and the same sha256 when the source's ETag is one (a wharf). A
 * source that tells neither keeps the target's file (noted): copying it on every run would never settle.
 */
async function sameFileWithoutChecksum(
  ctx: SyncContext,
  label: string,
  from: string,
  tp: TargetProvider,
): Promise<boolean> {
  if (!tp.download_url) return false;
  const token = await ctx.target.credentials.token();
  const ours = await fetch(tp.download_url, {
    method: "HEAD",
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  await ours.body?.cancel();
  if (!ours.ok) return false;
  let etag = "";
  try {
    const head = await openFile(from, "HEAD", ctx.sourceOrigin, ctx.sourceCredentials);
    await head.body?.cancel();
    etag = head.headers.get("etag")?.replaceAll('"', "") ?? "";
  } catch { /* the size below, by a ranged GET */ }
  if (/^[0-9a-f]{64}$/.test(etag)) return etag === ours.headers.get("etag")?.replaceAll('"', "");
  const size = await remoteSize(ctx, from);
  if (size === undefined) {
    ctx.report.note(
      `${label}: the source tells neither a checksum nor a size; the file on the target was kept`,
    );
    return true;
  }
  return String(size) === ours.headers.get("content-length");
}

async function runCopy(
  ctx: SyncContext,
  label: string,
  job: FileCopy,
  after: (() => Promise<unknown>) | undefined,
  fail: (error: string) => void,
): Promise<void> {
  const { report, progress } = ctx;
  if (ctx.dryRun) {
    try {
      const size = await remoteSize(ctx, job.from);
      report.would.files++;
      if (size === undefined) report.would.unknown_sizes++;
      else report.would.bytes += size;
      progress.line(`would copy ${label}${size !== undefined ? ` (${size} bytes)` : ""}`);
    } catch (err) {
      fail(message(err));
    }
    return;
  }
  progress.queued();
  await ctx.slot(async () => {
    const id = progress.start(label);
    for (let attempt = 1;; attempt++) {
      try {
        const bytes = await copyFile(ctx, { ...job, label }, {
          started: (total) => progress.sized(id, total),
          advanced: (n) => progress.advanced(id, n),
        });
        await after?.();
        report.files.copied++;
        report.files.bytes += bytes;
        progress.finished(id, { ok: true });
        return;
      } catch (err) {
        if (attempt < COPY_ATTEMPTS && transient(err)) {
          progress.restart(id, message(err));
          await new Promise((r) => setTimeout(r, 1000 * attempt));
          continue;
        }
        report.files.failed++;
        progress.finished(id, { ok: false, error: message(err) });
        fail(message(err));
        return;
      }
    }
  });
}

const COPY_ATTEMPTS = 3;

/** Worth another try: network errors, short reads, 429 and 5xx; never a refused checksum or another 4xx. */
function transient(err: unknown): boolean {
  if (!(err instanceof ApiFailure)) return true;
  if (/Checksum mismatch/.test(err.message)) return false;
  return err.status === 0 || err.status === 429 || err.status >= 500;
}

/** Release and revoke as the source has it; a target ahead of its source is left alone and noted. */
async function syncStatus(
  ctx: SyncContext,
  versionPath: string,
  tag: string,
  sv: SourceVersion,
  status: string,
): Promise<boolean> {
  const steps: ("release" | "revoke")[] = [];
  if (sv.status === "active" && status === "unreleased") steps.push("release");
  if (sv.status === "revoked" && status === "unreleased") steps.push("release", "revoke");
  if (sv.status === "revoked" && status === "active") steps.push("revoke");
  if (steps.length === 0 && sv.status !== status) {
    ctx.report.note(
      `${tag} ${sv.version} is ${status} on the target but ${sv.status} on the source: left as is`,
    );
  }
  for (const step of steps) {
    if (!ctx.dryRun) await ctx.target.call("PUT", `${versionPath}/${step}`);
    if (step === "release") ctx.report.versions.released++;
    else ctx.report.versions.revoked++;
  }
  return steps.length > 0;
}
