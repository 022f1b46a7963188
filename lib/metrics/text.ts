// Renders the registry: Prometheus text format 0.0.4, and the JSON shape of Nomad's /v1/metrics.

import { type AnyFamily, HistogramFamily } from "./registry.ts";

export const prometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/** A label value as the format quotes it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`) : value;
}

/** HELP text: backslash and line feed escaped. */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => c === "\n" ? "\\n" : "\\\\");
}

/** A sample value: integers as they are, +Inf/-Inf/NaN spelled the format's way. */
function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}

function labelText(names: readonly string[], values: readonly string[], extra = ""): string {
  const parts: string[] = [];
  for (let i = 0; i < names.length; i++) parts.push(`${names[i]}="${escapeLabelValue(values[i]!)}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(",")}}` : "";
}

export function renderPrometheus(families: readonly AnyFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
    if (f instanceof HistogramFamily) {
      for (const child of f.children()) {
        let cumulative = 0;
        const bounds = f.bounds;
        for (let i = 0; i <= bounds.length; i++) {
          cumulative += child.counts[i]!;
          const le = i < bounds.length ? formatValue(bounds[i]!) : "+Inf";
          out.push(`${f.name}_bucket${labelText(f.labelNames, child.labels, `le="${le}"`)} ${cumulative}`);
        }
        const labels = labelText(f.labelNames, child.labels);
        out.push(
          `${f.name}_sum${labels} ${formatValue(child.sum)}`,
          `${f.name}_count${labels} ${child.count}`,
        );
      }
    } else {
      for (const child of f.children()) {
        out.push(`${f.name}${labelText(f.labelNames, child.labels)} ${formatValue(child.value)}`);
      }
    }
  }
  return out.join("\n") + "\n";
}

function labelObject(names: readonly string[], values: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  names.forEach((n, i) => (labels[n] = values[i]!));
  return labels;
}

/**
 * Nomad's JSON shape (docs/operations.md#metrics): Gauges with Value; Counters and Samples (our histograms)
 * with Count and Sum since start (Nomad's are per interval; Min/Max/Stddev are not kept here).
 */
export function renderNomadJson(families: readonly AnyFamily[]): Record<string, unknown> {
  const gauges: unknown[] = [];
  const counters: unknown[] = [];
  const samples: unknown[] = [];
  for (const f of families) {
    if (f instanceof HistogramFamily) {
      for (const c of f.children()) {
        samples.push({
          Name: f.name,
          Count: c.count,
          Sum: c.sum,
          Mean: c.count ? c.sum / c.count : 0,
          Labels: labelObject(f.labelNames, c.labels),
        });
      }
    } else {
      for (const c of f.children()) {
        const labels = labelObject(f.labelNames, c.labels);
        if (f.type === "gauge") gauges.push({ Name: f.name, Value: c.value, Labels: labels });
        else counters.push({ Name: f.name, Count: c.value, Sum: c.value, Labels: labels });
      }
    }
  }
  const now = new Date();
  const timestamp = now.toISOString().replace("T", " ").replace(/\.\d+Z$/, " +0000 UTC");
  return { Timestamp: timestamp, Gauges: gauges, Points: [], Counters: counters, Samples: samples };
}
