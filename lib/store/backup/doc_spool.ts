// A backup's temporary file of checkpointed documents: what `create` read from a data directory's checkpoint, kept
// on disk (not in memory) while it reads the log, then read back one collection at a time into the archive.

import { writeAll } from "../file/fsutil.ts";
import { openFreshFile } from "./fresh_file.ts";
import { fileLines } from "../file/line_reader.ts";

/** A checkpointed document as the archive writes it: its JSON line, with the blobs it names. */
export interface CheckpointedDoc {
  id: string;
  line: string;
  blobs: string[];
}

const flushBytes = 1 << 20;
const encoder = new TextEncoder();

/**
 * `<output>.spool`, beside the archive's `<output>.partial` and created like it (only its owner may read it: it
 * holds the same documents, sealed values still sealed), and unlinked as soon as it is open: the open handle
 * is written and read back, so nothing is left behind whatever ends the backup, even a kill -9.
 */
export class DocSpool {
  readonly #file: Deno.FsFile;
  readonly #ranges = new Map<string, { start: number; end: number }>();
  #pending: string[] = [];
  /** UTF-16 units pending, to flush about every MiB. */
  #pendingBytes = 0;
  /** Bytes in the file. */
  #written = 0;
  #open: { collection: string; start: number } | undefined;

  private constructor(file: Deno.FsFile) {
    this.#file = file;
  }

  static async create(output: string): Promise<DocSpool> {
    const path = `${output}.spool`;
    const file = await openFreshFile(path, { read: true });
    try {
      await Deno.remove(path);
    } catch (err) {
      file.close();
      throw err;
    }
    return new DocSpool(file);
  }

  /** The collections written, in the order they were. */
  get collections(): string[] {
    return [...this.#ranges.keys()];
  }

  /** Starts `collection`'s documents (each collection once, its documents together). */
  async begin(collection: string): Promise<void> {
    await this.end();
    this.#open = { collection, start: this.#written };
  }

  async add(doc: CheckpointedDoc): Promise<void> {
    // A JSON string holds no raw tab or newline, and blob names are hex: the record splits unambiguously.
    const record = `${JSON.stringify(doc.id)}\t${doc.blobs.join(",")}\t${doc.line}\n`;
    this.#pending.push(record);
    this.#pendingBytes += record.length;
    if (this.#pendingBytes >= flushBytes) await this.#flush();
  }

  /** Closes the collection begun last, if any. */
  async end(): Promise<void> {
    await this.#flush();
    if (this.#open) this.#ranges.set(this.#open.collection, { start: this.#open.start, end: this.#written });
    this.#open = undefined;
  }

  /** `collection`'s documents, read back a chunk at a time (after `end`). */
  async *documents(collection: string): AsyncGenerator<CheckpointedDoc> {
    const range = this.#ranges.get(collection);
    if (!range) return;
    for await (const record of fileLines(this.#file, range.start, range.end)) {
      const idEnd = record.indexOf("\t");
      const blobsEnd = record.indexOf("\t", idEnd + 1);
      const blobs = record.slice(idEnd + 1, blobsEnd);
      yield {
        id: JSON.parse(record.slice(0, idEnd)),
        blobs: blobs ? blobs.split(",") : [],
        line: record.slice(blobsEnd + 1),
      };
    }
  }

  close(): void {
    this.#file.close();
  }

  async #flush(): Promise<void> {
    if (!this.#pending.length) return;
    const bytes = encoder.encode(this.#pending.join(""));
    this.#pending = [];
    this.#pendingBytes = 0;
    await writeAll(this.#file, bytes);
    this.#written += bytes.length;
  }
}
