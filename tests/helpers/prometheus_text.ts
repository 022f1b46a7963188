// A strict reader of Prometheus text format 0.0.4 as /v1/metrics writes it: families with HELP and TYPE before
// their samples, label values unescaped, no series twice, histograms whole (cumulative buckets, +Inf = _count).

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  samples: Sample[];
}

const nameRe = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNameRe = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Parses `text` into families by name; throws naming the line of the first violation. */
export function parsePrometheus(text: string): Map<string, MetricFamily> {
  if (!text.endsWith("\n")) throw new Error("the text does not end with a line feed");
  const families = new Map<string, MetricFamily>();
  const seen = new Set<string>();
  let current: MetricFamily | undefined;
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, i) => {
    const where = `line ${i + 1}: ${JSON.stringify(line.slice(0, 200))}`;
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    if (help) {
      if (families.has(help[1]!)) throw new Error(`${where}: family declared twice`);
      if (!nameRe.test(help[1]!)) throw new Error(`${where}: bad metric name`);
      current = { name: help[1]!, help: help[2]!, type: "untyped", samples: [] };
      families.set(current.name, current);
      return;
    }
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      if (current === undefined || current.name !== type[1] || current.samples.length) {
        throw new Error(`${where}: TYPE not after its HELP`);
      }
      current.type = type[2] as MetricFamily["type"];
      return;
    }
    if (line.startsWith("#") || line === "") throw new Error(`${where}: unexpected comment or blank line`);
    const sample = parseSample(line, where);
    if (!current) throw new Error(`${where}: sample before any family`);
    const suffixes = current.type === "histogram" ? ["_bucket", "_sum", "_count"] : [""];
    if (!suffixes.some((s) => sample.name === current!.name + s)) {
      throw new Error(`${where}: sample outside its family ${current.name}`);
    }
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(key)) throw new Error(`${where}: series appears twice`);
    seen.add(key);
    current.samples.push(sample);
  });
  for (const f of families.values()) {
    if (f.type === "untyped") throw new Error(`${f.name}: no TYPE`);
    if (f.type === "counter" && !f.name.endsWith("_total")) {
      throw new Error(`${f.name}: a counter without _total`);
    }
    if (f.type === "histogram") checkHistogram(f);
  }
  return families;
}

function parseSample(line: string, where: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
  if (!m) throw new Error(`${where}: not a sample`);
  const labels: Record<string, string> = {};
  const body = m[2]?.slice(1, -1) ?? "";
  let pos = 0;
  while (pos < body.length) {
    const eq = body.indexOf("=", pos);
    const name = body.slice(pos, eq);
    if (eq < 0 || !labelNameRe.test(name) || body[eq + 1] !== '"') throw new Error(`${where}: bad label`);
    let value = "";
    let j = eq + 2;
    for (; j < body.length && body[j] !== '"'; j++) {
      if (body[j] === "\n") throw new Error(`${where}: raw line feed in a label`);
      if (body[j] !== "\\") {
        value += body[j];
        continue;
      }
      const next = body[++j];
      if (next === "n") value += "\n";
      else if (next === "\\" || next === '"') value += next;
      else throw new Error(`${where}: bad escape \\${next}`);
    }
    if (j >= body.length) throw new Error(`${where}: unterminated label value`);
    if (name in labels) throw new Error(`${where}: label ${name} twice`);
    labels[name] = value;
    pos = j + 1;
    if (pos < body.length) {
      if (body[pos] !== ",") throw new Error(`${where}: expected a comma`);
      pos++;
    }
  }
  const raw = m[3]!;
  const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : raw === "NaN" ? NaN : Number(raw);
  if (Number.isNaN(value) && raw !== "NaN") throw new Error(`${where}: bad value`);
  return { name: m[1]!, labels, value };
}

/** Every histogram series: increasing buckets ending in le="+Inf", counts cumulative, +Inf = _count, a _sum. */
function checkHistogram(f: MetricFamily): void {
  const series = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new Error(`${f.name}: a bucket without le`);
      entry.buckets.push([le === "+Inf" ? Infinity : Number(le), s.value]);
    } else if (s.name.endsWith("_sum")) entry.sum = s.value;
    else entry.count = s.value;
  }
  for (const [key, e] of series) {
    const last = e.buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no le="+Inf" bucket`);
    if (e.sum === undefined || e.count === undefined) throw new Error(`${f.name}${key}: no _sum or _count`);
    if (last[1] !== e.count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} != _count ${e.count}`);
    e.buckets.forEach(([le, n], i) => {
      if (i > 0 && (le <= e.buckets[i - 1]![0] || n < e.buckets[i - 1]![1])) {
        throw new Error(`${f.name}${key}: buckets not increasing and cumulative`);
      }
    });
  }
}

/** The value of one series (undefined when absent). */
export function valueOf(
  families: Map<string, MetricFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ""));
  const want = Object.entries(labels);
  return family?.samples.find((s) =>
    s.name === name && Object.keys(s.labels).length === want.length &&
    want.every(([k, v]) => s.labels[k] === v)
  )?.value;
}
