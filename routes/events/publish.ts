// POST|PUT /v1/event/publish (wharf-only): validated fixture events committed as one batch, changing no state.

import type { AppContext } from "../../lib/app.ts";
import { ApiError } from "../../lib/errors.ts";
import type { RequestContext } from "../../lib/http.ts";
import type { Route } from "../../lib/router.ts";
import type { EventInput } from "../../lib/store/mod.ts";
import type { AclState } from "./acl_state.ts";
import { bodyField } from "./acl_model.ts";
import { decodeObjectBody } from "./acl_http.ts";
import { payloadMemberFor, topics } from "./topics.ts";

export const maxPublishEvents = 1000;
export const maxPublishBytes = 8 * 1024 * 1024;

class EventInvalid extends Error {}

/**
 * Validates one published event (docs/events.md#publishing-fixture-events) and returns it in producer form,
 * secrets forced out.
 */
export function validatePublishedEvent(raw: unknown): EventInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new EventInvalid("must be an object");
  }
  const e = raw as Record<string, unknown>;
  const topic = bodyField(e, "Topic");
  const type = bodyField(e, "Type");
  const key = bodyField(e, "Key");
  const namespace = bodyField(e, "Namespace");
  const filterKeys = bodyField(e, "FilterKeys");
  const payload = bodyField(e, "Payload");
  if (typeof topic !== "string") throw new EventInvalid("Topic must be a string");
  if (topic === "NodeDrain") {
    throw new EventInvalid('Topic "NodeDrain" is a view of Node events: publish Topic "Node"');
  }
  const info = topics.get(topic);
  if (!info) throw new EventInvalid(`unknown Topic ${JSON.stringify(topic)}`);
  if (typeof type !== "string") throw new EventInvalid("Type must be a string");
  if (!info.types.has(type)) {
    throw new EventInvalid(`Type ${JSON.stringify(type)} is not valid on Topic ${JSON.stringify(topic)}`);
  }
  if (typeof key !== "string") throw new EventInvalid("Key must be a string");
  let ns = "";
  if (namespace !== undefined && namespace !== null && typeof namespace !== "string") {
    throw new EventInvalid("Namespace must be a string");
  }
  if (info.namespaced) {
    ns = (namespace as string | null | undefined) || "default";
    if (ns === "*") throw new EventInvalid('Namespace must be a concrete name, not "*"');
  } else if (namespace) {
    throw new EventInvalid(`Namespace must be "" for Topic ${JSON.stringify(topic)}`);
  }
  let keys: string[] | null = null;
  if (filterKeys !== undefined && filterKeys !== null) {
    if (!Array.isArray(filterKeys) || filterKeys.some((k) => typeof k !== "string")) {
      throw new EventInvalid("FilterKeys must be null or an array of strings");
    }
    keys = filterKeys as string[];
  }
  const member = payloadMemberFor(topic, type)!;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new EventInvalid(`Payload must be an object with exactly one member, ${JSON.stringify(member)}`);
  }
  const members = Object.keys(payload);
  const value = (payload as Record<string, unknown>)[member];
  if (members.length !== 1 || members[0] !== member) {
    throw new EventInvalid(`Payload must have exactly one member, ${JSON.stringify(member)}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new EventInvalid(`Payload.${member} must be an object`);
  }
  let forced = value as Record<string, unknown>;
  if (topic === "ACLToken") forced = { ...forced, SecretID: "" };
  if (topic === "Allocation") forced = { ...forced, Job: null };
  return {
    Topic: topic,
    Type: type,
    Key: key,
    Namespace: ns,
    FilterKeys: keys,
    Payload: { [member]: forced },
  };
}

export function createPublishRoutes(ctx: AppContext, acl: AclState): Route[] {
  async function publish(req: RequestContext): Promise<Response> {
    acl.requireManagement(req);
    const body = await decodeObjectBody(req);
    const raw = bodyField(body, "Events");
    if (!Array.isArray(raw) || raw.length < 1 || raw.length > maxPublishEvents) {
      throw new ApiError(400, `Events must be an array of 1 to ${maxPublishEvents} events`);
    }
    const events = raw.map((e, i) => {
      try {
        return validatePublishedEvent(e);
      } catch (err) {
        if (err instanceof EventInvalid) throw new ApiError(400, `event ${i}: ${err.message}`);
        throw err;
      }
    });
    const { index } = await ctx.data.store.transact([], () => ({ events }));
    return new Response(JSON.stringify({ Index: index }), {
      status: 200,
      headers: { "Content-Type": "application/json", "X-Nomad-Index": String(index) },
    });
  }
  return [{
    method: ["POST", "PUT"],
    path: "/v1/event/publish",
    handler: publish,
    maxBodyBytes: maxPublishBytes,
  }];
}
