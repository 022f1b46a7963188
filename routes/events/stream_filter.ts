// Per-subscriber event matching (docs/events.md#streaming-with-curl): the namespace rule, then keys (with the
// NodeDrain view), at most once.

import type { StreamEvent } from "../../lib/store/mod.ts";
import type { StreamQuery } from "./stream_query.ts";

export type EventMatcher = (e: StreamEvent) => boolean;

const drainTypes = new Set(["NodeDrain", "NodeEligibility"]);
const none: ReadonlySet<string> = new Set();

export function compileMatcher(query: StreamQuery): EventMatcher {
  const { namespace, topics } = query;
  const anyTopic = topics.get("*") ?? none;
  const drainView = topics.get("NodeDrain") ?? none;
  return (e) => {
    if (e.Namespace !== "" && namespace !== "*" && e.Namespace !== namespace) return false;
    const own = topics.get(e.Topic) ?? none;
    const drain = e.Topic === "Node" && drainTypes.has(e.Type) ? drainView : none;
    if (anyTopic.size + own.size + drain.size === 0) return false;
    if (anyTopic.has("*") || own.has("*") || drain.has("*")) return true;
    if (hasKey(e.Key, anyTopic, own, drain)) return true;
    for (const k of e.FilterKeys ?? []) if (hasKey(k, anyTopic, own, drain)) return true;
    return false;
  };
}

/** A canonical text of the filter: subscribers with equal keys keep exactly the same events. */
export function filterKey(query: StreamQuery): string {
  const topics = [...query.topics.entries()].map(([t, keys]) =>
    `${t}\u0001${[...keys].sort().join("\u0001")}`
  ).sort();
  return `${query.namespace}\u0000${topics.join("\u0000")}`;
}

/** Whether the matcher keeps every event regardless of content (the frame can be reused verbatim). */
export function matchesEverything(query: StreamQuery): boolean {
  return query.namespace === "*" && (query.topics.get("*")?.has("*") ?? false);
}

function hasKey(k: string, a: ReadonlySet<string>, b: ReadonlySet<string>, c: ReadonlySet<string>): boolean {
  return a.has(k) || b.has(k) || c.has(k);
}
