// Go-style durations for ACL token TTLs: parse "1h30m", "500ms" (or a number of ns), format as "1h30m0s".

const unitNs: Record<string, number> = {
  ns: 1,
  us: 1e3,
  "µs": 1e3,
  "μs": 1e3,
  ms: 1e6,
  s: 1e9,
  m: 60e9,
  h: 3600e9,
};

/** Go's time.Duration is an int64 of nanoseconds: ParseDuration calls anything beyond it invalid. */
const maxDurationNs = (1n << 63n) - 1n;

/**
 * Nanoseconds of a Go duration string, or undefined when it is not one, including when it overflows an int64
 * ("9999999999999h"), as Go's time.ParseDuration answers `time: invalid duration`. Whole units are summed
 * exactly; a fraction adds its (truncated) nanoseconds.
 */
export function parseGoDuration(raw: string): number | undefined {
  let s = raw;
  let sign = 1;
  if (s.startsWith("-") || s.startsWith("+")) {
    if (s[0] === "-") sign = -1;
    s = s.slice(1);
  }
  if (s === "0") return 0;
  if (s === "") return undefined;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  const limit = sign < 0 ? maxDurationNs + 1n : maxDurationNs;
  let total = 0n;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return undefined;
    const unit = unitNs[m[2]!]!;
    const [whole = "", fraction = ""] = m[1]!.split(".");
    const digits = whole.replace(/^0+/, "");
    // More than 19 significant digits overflows whatever the unit (and keeps BigInt parsing cheap).
    if (digits.length > 19) return undefined;
    total += BigInt(digits || "0") * BigInt(unit);
    if (fraction) total += BigInt(Math.floor(Number(`0.${fraction}`) * unit));
    if (total > limit) return undefined;
    pos = re.lastIndex;
  }
  return sign * Number(total);
}

/** Formats nanoseconds the way Go's time.Duration.String does ("1h0m0s", "1.5s", "500ms", "0s"). */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return "0s";
  const neg = ns < 0;
  let n = Math.abs(Math.round(ns));
  let out: string;
  if (n < 1e9) {
    if (n < 1e3) out = `${n}ns`;
    else if (n < 1e6) out = `${trimFraction(n / 1e3)}µs`;
    else out = `${trimFraction(n / 1e6)}ms`;
  } else {
    const h = Math.floor(n / 3600e9);
    n -= h * 3600e9;
    const m = Math.floor(n / 60e9);
    n -= m * 60e9;
    const s = `${trimFraction(n / 1e9)}s`;
    out = h > 0 ? `${h}h${m}m${s}` : m > 0 ? `${m}m${s}` : s;
  }
  return neg ? `-${out}` : out;
}

function trimFraction(v: number): string {
  return String(Number(v.toFixed(9)));
}
