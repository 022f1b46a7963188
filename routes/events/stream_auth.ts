// Whether an ACL may subscribe to a parsed stream query (docs/events.md#acl-policies-for-stream-readers);
// checked before any byte and again on ACL changes.

import type { Acl } from "./acl_types.ts";
import { namespacedReadJobTopics } from "./topics.ts";
import type { StreamQuery } from "./stream_query.ts";

export function mayStream(acl: Acl, query: StreamQuery): boolean {
  if (acl.management) return true;
  for (const topic of query.topics.keys()) {
    if (namespacedReadJobTopics.has(topic)) {
      const ok = query.namespace === "*"
        ? acl.allowAllNamespaces("read-job")
        : acl.allowNamespace(query.namespace, "read-job");
      if (!ok) return false;
    } else if (topic === "Node" || topic === "NodeDrain") {
      if (!acl.allowNodeRead()) return false;
    } else {
      // "*", the ACL/project topics and unknown names need management.
      return false;
    }
  }
  return true;
}
