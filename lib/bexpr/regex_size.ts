// The size a `matches` pattern compiles to, estimated from its text before it is compiled: re2js spends
// microseconds per instruction, so a 2 KiB filter of counted repeats (`[a-z]{0,1000}` × 156) would hold the event
// loop for seconds (docs/security.md#summary, "List filters"). The rule is RE2's own size rule over the pattern's
// syntax; an unusual construct is counted as at least what RE2 counts, never less. Classes are counted by what
// re2js spends on them: a Unicode class (`\pL`) dozens of instructions, and under `(?i)` a class by the runes it
// must case-fold (`(?i)[Ā-\uFFFF]` took ~4 ms, as much as ~1,000 instructions).

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

/** Runes re2js case-folds one by one when a class range overlaps them only in part (its fold table's span). */
const foldFirst = 0x41;
const foldLast = 0x1e943;
/** Folded runes that cost about one instruction to compile (measured: ~0.05 µs a rune, ~3 µs an instruction). */
const foldedRunesPerInstruction = 64;
/** A Unicode class (`\pL`, `\p{Greek}`, `\PL`), and one under `(?i)`; a negated class under `(?i)`. */
const unicodeClassSize = 30;
const foldedUnicodeClassSize = 100;
const foldedNegatedClassSize = 40;
/** What `#classRune` returns for `\d`, `\s`, `\w` and their negations: small classes, counted as the class. */
const perlClass = -1;

class SizeScan {
  #p: string;
  #i = 0;
  /** Whether `(?i)` is on where the scan is (scoped to the group that set it). */
  #fold = false;

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
    if (c === "[") return this.#class();
    if (c === "\\") return this.#escape();
    this.#i++;
    return 1;
  }

  #group(): number | undefined {
    const p = this.#p;
    this.#i++;
    let capture = true;
    const outerFold = this.#fold;
    if (p[this.#i] === "?") {
      this.#i++;
      if (p[this.#i] === "P" || p[this.#i] === "<") {
        const close = p.indexOf(">", this.#i);
        this.#i = close < 0 ? p.length : close + 1;
      } else {
        let negated = false;
        for (; /[imsU-]/.test(p[this.#i] ?? ""); this.#i++) {
          if (p[this.#i] === "-") negated = true;
          else if (p[this.#i] === "i") this.#fold = !negated;
        }
        // `(?i)` holds for the rest of the enclosing group; `(?i:…)` for its own.
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
    this.#fold = outerFold;
    return capture ? 2 + inner : inner;
  }

  /** A class `[…]`: 1, or more for the Unicode classes in it and, under `(?i)`, for the runes it must fold. */
  #class(): number {
    const p = this.#p;
    this.#i++;
    const negated = p[this.#i] === "^";
    if (negated) this.#i++;
    let extra = 0;
    let folded = 0;
    let first = true;
    while (this.#i < p.length) {
      if (p[this.#i] === "]" && !first) {
        this.#i++;
        break;
      }
      first = false;
      if (p.startsWith("[:", this.#i)) {
        const close = p.indexOf(":]", this.#i + 2);
        this.#i = close < 0 ? this.#i + 1 : close + 2;
        continue;
      }
      const lo = this.#classRune();
      if (lo === perlClass) continue;
      if (lo === undefined) {
        extra += this.#fold ? foldedUnicodeClassSize : unicodeClassSize;
        continue;
      }
      let hi = lo;
      if (p[this.#i] === "-" && p[this.#i + 1] !== "]" && this.#i + 1 < p.length) {
        this.#i++;
        hi = this.#classRune() ?? lo;
        if (hi === perlClass) hi = lo;
      }
      if (hi >= lo && !(lo <= foldFirst && hi >= foldLast)) {
        folded += Math.max(0, Math.min(hi, foldLast) - Math.max(lo, foldFirst) + 1);
      }
    }
    if (!this.#fold) return 1 + extra;
    if (negated) return foldedNegatedClassSize + extra;
    return 1 + extra + Math.floor(folded / foldedRunesPerInstruction);
  }

  /** One rune of a class (a character or an escape naming one); `perlClass` for `\d` and the like, undefined for `\p…`. */
  #classRune(): number | undefined {
    const p = this.#p;
    if (p[this.#i] !== "\\") {
      const rune = p.codePointAt(this.#i)!;
      this.#i += rune > 0xffff ? 2 : 1;
      return rune;
    }
    const kind = p[this.#i + 1];
    if (kind === "x") {
      const m = /^\\x(?:\{([0-9A-Fa-f]{1,8})\}|([0-9A-Fa-f]{2}))/.exec(p.slice(this.#i, this.#i + 13));
      if (m) {
        this.#i += m[0].length;
        return parseInt(m[1] ?? m[2]!, 16);
      }
    }
    if (kind === "p" || kind === "P") {
      this.#escape();
      return undefined;
    }
    if (kind !== undefined && /[dDsSwW]/.test(kind)) {
      this.#i += 2;
      return perlClass;
    }
    this.#i += 2;
    return kind === undefined ? undefined : kind.codePointAt(0);
  }

  /** `\Q…\E` counts its characters, a Unicode class (`\pL`, `\p{…}`) as a class; any other escape one. */
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
    const unicodeClass = kind === "p" || kind === "P";
    const size = unicodeClass ? (this.#fold ? foldedUnicodeClassSize : unicodeClassSize) : 1;
    if ((unicodeClass || kind === "x") && p[this.#i + 2] === "{") {
      const close = p.indexOf("}", this.#i + 3);
      this.#i = close < 0 ? p.length : close + 1;
      return size;
    }
    this.#i += unicodeClass ? 3 : 2; // `\pL`: a one-letter class name
    return size;
  }
}
