// Parses the event stream's query (docs/events.md#streaming-with-curl): index, namespace and the repeatable
// topic=Topic[:key].

import { ApiError } from "../../lib/errors.ts";

export interface StreamQuery {
  /** The start index as given: 0 = oldest retained, negative = from now. */
  index: number;
  /** A literal namespace name, or "*" for all. */
  namespace: string;
  /** Requested keys per topic ("*" = all keys). */
  topics: Map<string, Set<string>>;
}

const int64Max = 9223372036854775807n;
const int64Min = -9223372036854775808n;

export function parseStreamQuery(params: URLSearchParams): StreamQuery {
  const rawIndex = params.get("index") ?? "";
  let index = 0;
  if (rawIndex !== "") {
    const quoted = JSON.stringify(rawIndex);
    if (!/^[+-]?[0-9]+$/.test(rawIndex)) {
      throw new ApiError(400, `Unable to parse index: strconv.Atoi: parsing ${quoted}: invalid syntax`);
    }
    const big = BigInt(rawIndex);
    if (big > int64Max || big < int64Min) {
      throw new ApiError(400, `Unable to parse index: strconv.Atoi: parsing ${quoted}: value out of range`);
    }
    index = Number(big);
  }
  const namespace = params.get("namespace") || "default";
  const topics = new Map<string, Set<string>>();
  const raw = params.getAll("topic");
  if (raw.length === 0) topics.set("*", new Set(["*"]));
  for (const value of raw) {
    const parts = value.split(":");
    if (parts.length > 2) {
      throw new ApiError(
        400,
        `Invalid topic query: error parsing topics: Invalid key value pair for topic, topic: ${value}`,
      );
    }
    const topic = parts[0]!;
    const key = parts.length === 2 ? parts[1]! : "*";
    let keys = topics.get(topic);
    if (!keys) topics.set(topic, keys = new Set());
    keys.add(key);
  }
  return { index, namespace, topics };
}
