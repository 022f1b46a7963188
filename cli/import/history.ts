// Download counts and creation/update times, carried through the target's admin-only history API; a token
// that is not an admin's gets everything else and one report line saying what was not kept.

import { ApiFailure, type RegistryApi } from "./http.ts";
import type { ImportReport } from "./report.ts";
import type { SourceBox } from "./source.ts";

interface Times {
  created_at?: string;
  updated_at?: string;
}

interface History extends Times {
  downloads_imported: number | null;
  versions: (Times & { version: string; providers: (Times & { name: string; architecture: string })[] })[];
}

const NOT_KEPT = "download counts and creation times were not kept: the target token is not an admin's " +
  "(run the same command again with an admin token to carry them over)";

const NO_API = "download counts and creation times were not kept: the target has no box history API " +
  "(a wharf older than the importer)";

function times(t: { created_at: string | null; updated_at: string | null }): Times {
  const out: Times = {};
  for (const k of ["created_at", "updated_at"] as const) {
    const ms = t[k] ? Date.parse(t[k]!) : NaN;
    if (!Number.isNaN(ms)) out[k] = new Date(ms).toISOString();
  }
  return out;
}

const differs = (want: Times, have: Times) =>
  (want.created_at !== undefined && want.created_at !== have.created_at) ||
  (want.updated_at !== undefined && want.updated_at !== have.updated_at);

export class HistorySync {
  readonly #target: RegistryApi;
  readonly #report: ImportReport;
  #allowed = true;

  constructor(target: RegistryApi, report: ImportReport) {
    this.#target = target;
    this.#report = report;
  }

  #path(tag: string): string {
    const [ns, name] = tag.split("/");
    return `/api/v2/admin/boxes/${encodeURIComponent(ns!)}/${encodeURIComponent(name!)}/history`;
  }

  async #read(tag: string): Promise<History | undefined> {
    if (!this.#allowed) return undefined;
    try {
      return await this.#target.call<History>("GET", this.#path(tag));
    } catch (err) {
      if (err instanceof ApiFailure && (err.status === 403 || err.status === 401)) {
        this.#allowed = false;
        this.#report.note(NOT_KEPT);
        return undefined;
      }
      if (err instanceof ApiFailure && err.status === 404) {
        // The box exists (it was just read or created): the route does not, on a wharf older than the import.
        this.#allowed = false;
        this.#report.note(NO_API);
        return undefined;
      }
      throw err;
    }
  }

  /**
   * The source's count becomes the box's imported base once, when it has none: reading it before this run
   * downloads the box's files keeps the importer's own downloads out of it, and later runs leave it alone.
   */
  async carryDownloads(tag: string, downloads: number): Promise<void> {
    const history = await this.#read(tag);
    if (!history || history.downloads_imported !== null) return;
    await this.#target.call("PUT", this.#path(tag), { downloads_imported: downloads });
  }

  /** Sets the source's creation and update times where the target's differ (after every other change). */
  async carryTimes(tag: string, src: SourceBox): Promise<void> {
    const history = await this.#read(tag);
    if (!history) return;
    const want = { ...times(src), versions: [] as History["versions"] };
    let change = differs(want, history);
    for (const sv of src.versions) {
      const tv = history.versions.find((v) => v.version === sv.version);
      if (!tv) continue;
      const v = { version: sv.version, ...times(sv), providers: [] as History["versions"][0]["providers"] };
      change ||= differs(v, tv);
      for (const sp of sv.providers) {
        const tp = tv.providers.find((p) => p.name === sp.name && p.architecture === sp.architecture);
        if (!tp) continue;
        const p = { name: sp.name, architecture: sp.architecture, ...times(sp) };
        change ||= differs(p, tp);
        v.providers.push(p);
      }
      want.versions.push(v);
    }
    if (change) await this.#target.call("PUT", this.#path(tag), want);
  }
}
