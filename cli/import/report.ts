// What an import did (or, dry, would do): counts, failures and what was not kept; printed as a summary or JSON.

import { formatBytes } from "./progress.ts";

export interface Failure {
  box: string;
  version?: string;
  provider?: string;
  error: string;
}

export class ImportReport {
  source = "";
  source_api: 1 | 2 = 2;
  target = "";
  dry_run = false;
  boxes = { created: 0, updated: 0, unchanged: 0 };
  versions = { created: 0, updated: 0, released: 0, revoked: 0 };
  providers = { created: 0, updated: 0 };
  files = { copied: 0, bytes: 0, skipped: 0, failed: 0, external_kept: 0 };
  would = { files: 0, bytes: 0, unknown_sizes: 0 };
  failures: Failure[] = [];
  notes: string[] = [];

  fail(failure: Failure): void {
    this.failures.push(failure);
  }

  note(text: string): void {
    if (!this.notes.includes(text)) this.notes.push(text);
  }

  toJSON() {
    const { source, source_api, target, dry_run, boxes, versions, providers, files, failures, notes } = this;
    return {
      source,
      source_api,
      target,
      dry_run,
      boxes,
      versions,
      providers,
      files,
      ...(dry_run ? { would_copy: this.would } : {}),
      failures,
      notes,
      ok: failures.length === 0,
    };
  }

  summary(): string {
    const b = this.boxes;
    const lines = [
      `boxes: ${b.created} created, ${b.updated} updated, ${b.unchanged} unchanged`,
      `versions: ${this.versions.created} created, ${this.versions.updated} updated, ` +
      `${this.versions.released} released, ${this.versions.revoked} revoked`,
      `providers: ${this.providers.created} created, ${this.providers.updated} updated`,
    ];
    if (this.dry_run) {
      const unknown = this.would.unknown_sizes ? ` (+${this.would.unknown_sizes} of unknown size)` : "";
      lines.push(
        `dry run: ${this.would.files} files would be copied, ${formatBytes(this.would.bytes)}${unknown}`,
      );
    } else {
      lines.push(
        `${this.files.copied} files copied (${
          formatBytes(this.files.bytes)
        }), ${this.files.skipped} skipped ` +
          `(already there), ${this.files.external_kept} external URLs kept, ${this.files.failed} failed`,
      );
    }
    for (const n of this.notes) lines.push(`note: ${n}`);
    for (const f of this.failures) {
      const where = [f.box, f.version, f.provider].filter(Boolean).join(" ");
      lines.push(`FAILED ${where}: ${f.error}`);
    }
    return lines.join("\n");
  }
}
