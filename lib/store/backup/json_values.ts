// Counts what parsing JSON text can build, streamed over its bytes: every `{`, `[` and `,` outside a string (each
// container, and each value or member after a container's first: an over-count of the values JSON.parse makes),
// per line or over the whole text, so a line can be refused before it is parsed (entry_caps.ts).

const quote = 0x22;
const backslash = 0x5c;
const newline = 0x0a;
const openBrace = 0x7b;
const openBracket = 0x5b;
const comma = 0x2c;

/** The counts of one text fed in chunks: the most values on one line (or in the whole text), and where. */
export class JsonValueCounter {
  readonly #perLine: boolean;
  #inString = false;
  #escaped = false;
  #current = 0;
  /** Lines ended so far (newline bytes). */
  lines = 0;
  /** The most values counted on one line (or, not per line, in the whole text). */
  most = 0;
  /** The 1-based line that holds `most` values. */
  mostAtLine = 0;

  /** `perLine`: each line is one JSON text (ndjson); otherwise the whole text is one. */
  constructor(perLine: boolean) {
    this.#perLine = perLine;
  }

  add(chunk: Uint8Array): void {
    let inString = this.#inString;
    let escaped = this.#escaped;
    let current = this.#current;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === newline) {
        // A raw newline never belongs to a JSON string: each line is counted on its own.
        this.#note(current);
        this.lines++;
        if (this.#perLine) {
          current = 0;
          inString = false;
          escaped = false;
        }
      } else if (inString) {
        if (escaped) escaped = false;
        else if (c === backslash) escaped = true;
        else if (c === quote) inString = false;
      } else if (c === quote) inString = true;
      else if (c === openBrace || c === openBracket || c === comma) current++;
    }
    this.#inString = inString;
    this.#escaped = escaped;
    this.#current = current;
  }

  /** Counts the last line (one not ended by a newline); returns the counter. */
  finish(): this {
    this.#note(this.#current);
    return this;
  }

  #note(count: number): void {
    if (count > this.most) {
      this.most = count;
      this.mostAtLine = this.lines + 1;
    }
  }
}

/** Counts `bytes` at once. */
export function countJsonValues(bytes: Uint8Array, perLine: boolean): JsonValueCounter {
  const counter = new JsonValueCounter(perLine);
  counter.add(bytes);
  return counter.finish();
}
