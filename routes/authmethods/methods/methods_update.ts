// PATCH of an auth method and OIDC change-state (docs/auth-methods.md#managing-auth-methods): field masks,
// optimistic versions, completeness and discovered-configuration validation.

import { ApiError } from "../../../lib/errors.ts";
import { json, type RequestContext } from "../../../lib/http.ts";
import { asAttrs, type Attrs } from "./attrs_common.ts";
import { incompleteFields, oidcStates } from "./attrs_oidc.ts";
import { assertIdFormat, collections, isObject, methodTypeOfId, nowIso } from "../common.ts";
import { fieldError, FieldErrors, notFound, versioned, versionMismatch } from "../errors.ts";
import { applyNameDescription, checkPatchKeys, fieldMask, requireVersion } from "../fields.ts";
import { loadMethodForAdmin, methodIdPrefixes, nameTaken, readOnlyTop } from "./methods.ts";
import { applyAttributes, renderMethod, storeSecrets } from "./methods_model.ts";
import { type AuthService, readObjectBody } from "../service.ts";
import { type ActorCaller, type MethodDoc, methodEvent } from "../state.ts";

const allowedTop = ["name", "description", "version", "type", "scope_id", "attributes", "dry_run"];

export async function updateMethod(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const { id, actor, stored } = loadMethodForAdmin(svc, ctx);
  const body = await readObjectBody(ctx);
  const errors = new FieldErrors();
  checkPatchKeys(body, allowedTop, readOnlyTop, errors);
  const idType = methodTypeOfId(id)!;
  if ("type" in body && body.type !== idType) errors.add("type", "Cannot modify the resource type.");
  if ("attributes" in body && body.attributes !== null && !isObject(body.attributes)) {
    errors.add("attributes", "Expected an object.");
  }
  const current = stored();
  if ("scope_id" in body && body.scope_id !== current.doc.scope_id) {
    errors.add("scope_id", "This field is read only.");
  }
  errors.throwIfAny();
  const version = requireVersion(body);
  const attrsBody: Attrs = { ...(asAttrs(body.attributes) ?? {}) };
  let dryRun = body.dry_run === true;
  if ("dry_run" in attrsBody && idType === "oidc") {
    dryRun = attrsBody.dry_run === true;
    delete attrsBody.dry_run;
  }
  const bodyForMask = { ...body, attributes: attrsBody };
  delete (bodyForMask as Record<string, unknown>).dry_run;
  const mask = fieldMask(
    ctx.url,
    bodyForMask,
    (p) => p === "name" || p === "description" || /^attributes\.[a-z_]+$/.test(p),
  );
  const named: { name?: string; description?: string } = {
    name: current.doc.name,
    description: current.doc.description,
  };
  const topMask = new Set(mask.filter((p) => !p.startsWith("attributes.")));
  const topValues: Record<string, unknown> = {};
  for (const k of topMask) topValues[k] = k in body ? body[k] : null;
  applyNameDescription(topValues, named, errors, topMask);
  const attrInput: Attrs = {};
  for (const p of mask) {
    if (!p.startsWith("attributes.")) continue;
    const key = p.slice("attributes.".length);
    if (key === "__proto__") {
      errors.add(p, "Unknown field.");
      continue;
    }
    attrInput[key] = key in attrsBody ? attrsBody[key] : null;
  }
  const outcome = applyAttributes(current.doc.type, {
    mode: "update",
    base: current.doc.attributes,
    baseSecrets: new Set(Object.keys(current.doc.secrets)),
    input: attrInput,
    errors,
  });
  if (current.doc.type === "oidc") {
    if (dryRun && outcome.attributes.disable_discovered_config_validation === true) {
      errors.add("attributes.dry_run", "Cannot dry-run with disable_discovered_config_validation.");
    }
    const secretAfter = outcome.secrets.client_secret !== undefined
      ? outcome.secrets.client_secret !== null
      : "client_secret" in current.doc.secrets;
    const missing = incompleteFields(outcome.attributes, secretAfter);
    if (outcome.attributes.state !== "inactive" && missing.length) {
      for (const f of missing) {
        errors.add(`attributes.${f}`, "An active OIDC auth method must have this field.");
      }
    }
  }
  errors.throwIfAny();
  if (named.name && nameTaken(svc, current.doc.scope_id, named.name, id)) {
    throw fieldError({ name: "name", description: "Name is already in use in this scope." });
  }
  if (current.version !== version) throw versionMismatch(version, current.version);

  const next: MethodDoc = {
    ...current.doc,
    ...named,
    attributes: outcome.attributes,
    secrets: { ...current.doc.secrets },
    hmacs: { ...current.doc.hmacs },
  };
  if (named.name === undefined) delete next.name;
  if (named.description === undefined) delete next.description;
  storeSecrets(svc.state, id, next, outcome.secrets);
  if (next.type === "oidc") {
    const flag = next.attributes.disable_discovered_config_validation === true;
    const incomplete = incompleteFields(next.attributes, "client_secret" in next.secrets).length > 0;
    if (!flag && !(next.attributes.state === "inactive" && incomplete)) {
      const reasons = await svc.oidc.validateDiscoveredConfig(svc.state.openAttributes(id, next), {
        timeoutMs: svc.settings.oidcTimeoutMs,
      });
      if (reasons.length) {
        throw new ApiError(400, `Discovered configuration validation failed: ${reasons.join("; ")}`);
      }
    }
  }
  if (dryRun) {
    const rendered = renderMethod(svc.state, { ...current, doc: next }, true);
    return json({ ...rendered, attributes: { ...(rendered.attributes as Attrs), dry_run: true } });
  }
  await commitMethodUpdate(svc, id, version, next, actor, "AuthMethodUpdated", {
    changed_fields: [...mask].sort(),
  });
  return json(renderMethod(svc.state, svc.state.method(id)!, true));
}

/** Writes `next` if the stored version still equals `version` (else 409), with one event. */
async function commitMethodUpdate(
  svc: AuthService,
  id: string,
  version: number,
  next: MethodDoc,
  actor: ActorCaller,
  eventType: string,
  extra: Record<string, unknown>,
): Promise<void> {
  await versioned(svc.state.store.transact(
    [`${collections.methods}/${id}`, `auth/methodname/${next.scope_id}`],
    () => {
      const cur = svc.state.method(id);
      if (!cur) throw notFound();
      if (cur.version !== version) throw versionMismatch(version, cur.version);
      if (next.name && nameTaken(svc, next.scope_id, next.name, id)) {
        throw fieldError({ name: "name", description: "Name is already in use in this scope." });
      }
      const doc = { ...next, updated_time: nowIso() };
      return {
        writes: [{ collection: collections.methods, id, doc, ifVersion: version }],
        events: [methodEvent(eventType, id, doc, version + 1, actor, extra)],
      };
    },
  ));
}

export async function changeState(svc: AuthService, ctx: RequestContext): Promise<Response> {
  const id = ctx.params.id!;
  assertIdFormat(id, methodIdPrefixes);
  const actor = svc.requireAdmin(ctx);
  if (methodTypeOfId(id) !== "oidc") {
    throw new ApiError(404, 'This endpoint is only available for the "oidc" Auth Method type.');
  }
  const body = await readObjectBody(ctx);
  const version = requireVersion(body, "Resource version is required.");
  const attrs = asAttrs(body.attributes);
  if (!attrs) throw fieldError({ name: "attributes", description: "This field is required." });
  const state = attrs.state;
  if (typeof state !== "string" || !(oidcStates as readonly string[]).includes(state)) {
    throw fieldError({
      name: "attributes.state",
      description: 'Only supported values are "inactive", "active-private", or "active-public".',
    });
  }
  const flagRaw = attrs.disable_discovered_config_validation;
  if (flagRaw !== undefined && flagRaw !== null && typeof flagRaw !== "boolean") {
    throw fieldError({
      name: "attributes.disable_discovered_config_validation",
      description: "Expected a boolean value.",
    });
  }
  const flag = flagRaw === true;
  const current = svc.state.method(id);
  if (!current) throw notFound();
  if (current.version !== version) throw versionMismatch(version, current.version);
  const from = current.doc.attributes.state as string;
  const storedFlag = current.doc.attributes.disable_discovered_config_validation === true;
  if (from === state && storedFlag === flag) return json(renderMethod(svc.state, current, true));
  if (from === "inactive" && state !== "inactive") {
    const missing = incompleteFields(current.doc.attributes, "client_secret" in current.doc.secrets);
    if (missing.length) {
      throw fieldError(
        missing.map((f) => ({
          name: `attributes.${f}`,
          description: "Required to activate the auth method.",
        })),
        `Unable to change auth method state: missing ${missing.join(", ")}.`,
      );
    }
    if (!flag) {
      const reasons = await svc.oidc.validateDiscoveredConfig(svc.state.openAttributes(id, current.doc), {
        timeoutMs: svc.settings.oidcTimeoutMs,
      });
      if (reasons.length) {
        throw new ApiError(400, `Unable to change auth method state: ${reasons.join("; ")}`);
      }
    }
  }
  const attributes: Attrs = { ...current.doc.attributes, state };
  if (flag) attributes.disable_discovered_config_validation = true;
  else delete attributes.disable_discovered_config_validation;
  const next: MethodDoc = { ...current.doc, attributes };
  await commitMethodUpdate(svc, id, version, next, actor, "AuthMethodStateChanged", { from, to: state });
  return json(renderMethod(svc.state, svc.state.method(id)!, true));
}
