// Reads a file's lines a chunk at a time (a log segment, a pack, a backup's spool), so a file of any size is never
// held whole.

import { concatBytes } from "../../bytes.ts";

const chunkBytes = 1 << 20;
const decoder = new TextDecoder();

/**
 * The lines (without their newline) of `file` between byte `start` and `end`, read 1 MiB at a time from those
 * offsets (the file's position is moved). A last line without a newline is yielded too, unless `unterminated` is
 * "drop" (a log's line still being written). Each line's bytes are valid until the next one is asked for; only a
 * line longer than a chunk is ever held beyond one chunk.
 */
export async function* fileLineBytes(
  file: Deno.FsFile,
  start: number,
  end: number,
  unterminated: "yield" | "drop" = "yield",
): AsyncGenerator<Uint8Array> {
  yield* lineBytes(fileChunks(file, start, end), unterminated);
}

/** `file`'s bytes between `start` and `end`, 1 MiB at a time, in one buffer read into again for each chunk. */
async function* fileChunks(file: Deno.FsFile, start: number, end: number): AsyncGenerator<Uint8Array> {
  await file.seek(start, Deno.SeekMode.Start);
  const chunk = new Uint8Array(chunkBytes);
  for (let position = start; position < end;) {
    const n = await file.read(chunk.subarray(0, Math.min(chunkBytes, end - position)));
    if (n === null) break;
    position += n;
    yield chunk.subarray(0, n);
  }
}

/**
 * The lines (without their newline) of the bytes `chunks` deliver (a chunk's buffer may be reused once the next is
 * asked for: a line's start that runs on is copied). Each line's bytes are valid until the next one is asked for.
 */
export async function* lineBytes(
  chunks: AsyncIterable<Uint8Array>,
  unterminated: "yield" | "drop" = "yield",
): AsyncGenerator<Uint8Array> {
  let carried: Uint8Array[] = [];
  for await (const bytes of chunks) {
    let from = 0;
    for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, from)) {
      const piece = bytes.subarray(from, nl);
      yield carried.length ? concatBytes([...carried, piece]) : piece;
      carried = [];
      from = nl + 1;
    }
    if (from < bytes.length) carried.push(bytes.slice(from));
  }
  if (carried.length && unterminated === "yield") yield concatBytes(carried);
}

/** fileLineBytes' lines as text. */
export async function* fileLines(file: Deno.FsFile, start: number, end: number): AsyncGenerator<string> {
  for await (const bytes of fileLineBytes(file, start, end)) yield decoder.decode(bytes);
}
