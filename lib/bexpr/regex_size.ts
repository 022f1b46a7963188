// The size a `matches` pattern compiles to, estimated from its text before it is compiled: re2js spends
// microseconds per instruction, so a 2 KiB filter of counted repeats (`[a-z]{0,1000}` × 156) would hold the event
// loop for seconds (docs/security.md#summary, "List filters"). The rule is RE2's own size rule over the pattern's
// syntax; an unusual construct is counted as at least what RE2 counts, never less.

/** Instructions a `matches` pattern may compile to here (Go's regexp allows ~1.4 million). */
export const maxRegexSize = 2_500;

/** The estimated program size of an RE2 pattern (capped at 1e9); a malformed one gets a size, not an error. */
export function regexSizeEstimate(pattern: string): number {
  const scan = new SizeScan(pattern);
  let total = 0;
  while (!scan.done) {
    total = capped(total + scan.alternation());
    scan.skip(); // a stray ")": RE2 refuses it when it compiles
  }
  return total;
}

const capped = (n: number) => Math.min(n, 1e9);

class SizeScan {
  #p: string;
  #i = 0;

  constructor(pattern: string) {
    this.#p = pattern;
  }

  get done(): boolean {
    return this.#i >= this.#p.length;
  }

  skip(): void {
    this.#i++;
  }

  /** Branches up to a ")" or the end: their sum, and one instruction per branch after the first. */
  alternation(): number {
    let size = this.#sequence();
    while (this.#p[this.#i] === "|") {
      this.#i++;
      size = capped(size + 1 + this.#sequence());
    }
    return size;
  }

  #sequence(): number {
    let size = 0;
    while (!this.done && this.#p[this.#i] !== "|" && this.#p[this.#i] !== ")") {
      const atom = this.#atom();
      if (atom !== undefined) size = capped(size + this.#repeated(atom));
    }
    return size;
  }

  /** The atom's size with the repetition operators after it applied (RE2's rule for each). */
  #repeated(atom: number): number {
    for (;;) {
      const c = this.#p[this.#i];
      if (c === "*") atom = 2 + atom;
      else if (c === "+" || c === "?") atom = 1 + atom;
      else if (c === "{") {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(this.#p.slice(this.#i, this.#i + 16));
        if (!m) return atom; // a literal "{", counted as the next atom
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === "" ? -1 : Number(m[3]);
        atom = max === -1 ? (min === 0 ? 2 + atom : 1 + min * atom) : max * atom + Math.max(0, max - min);
        this.#i += m[0].length - 1;
      } else return atom;
      this.#i++;
      if (this.#p[this.#i] === "?") this.#i++; // non-greedy
      atom = capped(atom);
    }
  }

  /** One atom's size; undefined for a flag group such as `(?i)`, which matches nothing. */
  #atom(): number | undefined {
    const p = this.#p;
    const c = p[this.#i]!;
    if (c === "(") return this.#group();
    if (c === "[") {
      this.#class();
      return 1;
    }
    if (c === "\\") return this.#escape();
    this.#i++;
    return 1;
  }

  #group(): number | undefined {
    const p = this.#p;
    this.#i++;
    let capture = true;
    if (p[this.#i] === "?") {
      this.#i++;
      if (p[this.#i] === "P" || p[this.#i] === "<") {
        const close = p.indexOf(">", this.#i);
        this.#i = close < 0 ? p.length : close + 1;
      } else {
        while (/[imsU-]/.test(p[this.#i] ?? "")) this.#i++;
        if (p[this.#i] === ")") {
          this.#i++;
          return undefined;
        }
        if (p[this.#i] === ":") this.#i++;
        capture = false;
      }
    }
    const inner = this.alternation();
    if (p[this.#i] === ")") this.#i++;
    return capture ? 2 + inner : inner;
  }

  #class(): void {
    const p = this.#p;
    this.#i++;
    if (p[this.#i] === "^") this.#i++;
    if (p[this.#i] === "]") this.#i++;
    while (this.#i < p.length) {
      if (p[this.#i] === "\\") this.#escape();
      else if (p.startsWith("[:", this.#i)) {
        const close = p.indexOf(":]", this.#i + 2);
        this.#i = close < 0 ? this.#i + 1 : close + 2;
      } else if (p[this.#i++] === "]") return;
    }
  }

  /** `\Q…\E` counts its characters; `\p{…}` and `\x{…}` one; any other escape one. */
  #escape(): number {
    const p = this.#p;
    const kind = p[this.#i + 1];
    if (kind === "Q") {
      const end = p.indexOf("\\E", this.#i + 2);
      const stop = end < 0 ? p.length : end;
      const size = Math.max(1, stop - (this.#i + 2));
      this.#i = end < 0 ? p.length : end + 2;
      return size;
    }
    if ((kind === "p" || kind === "P" || kind === "x") && p[this.#i + 2] === "{") {
      const close = p.indexOf("}", this.#i + 3);
      this.#i = close < 0 ? p.length : close + 1;
      return 1;
    }
    this.#i += 2;
    return 1;
  }
}
