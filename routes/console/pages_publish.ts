// Publishing from the browser: create and edit a box, create a version, edit, release, revoke and delete it
// (providers and uploads: pages_providers.ts). Each calls the registry service the API route calls, as the
// signed-in user; destructive steps go through a confirmation page first.

import { ApiError } from "../../lib/errors.ts";
import { createBox, deleteBox, updateBox, visibleBox } from "../registry/services/boxes.ts";
import {
  createVersion,
  deleteVersion,
  releaseVersion,
  revokeVersion,
  updateVersion,
  type VersionPath,
} from "../registry/services/versions.ts";
import type { ProviderPath } from "../registry/services/providers.ts";
import type { Actor } from "../registry/core/registry.ts";
import { actor, type ConsoleReq, errorMessages } from "./context.ts";
import { checked, field, type Form, signedInForm } from "./forms.ts";
import { html, seg } from "./html.ts";
import { csrfField, page, seeOther } from "./layout.ts";

/** The version a /ui/boxes/:user/:box/versions/:version path names. */
export function versionPath(c: ConsoleReq): VersionPath {
  const p = c.ctx.params;
  return { owner: p.user ?? "", box: p.box ?? "", version: p.version ?? "" };
}

/** The provider a /ui/boxes/:user/:box/versions/:version/providers/:provider/:arch path names. */
export function providerPath(c: ConsoleReq): ProviderPath {
  return { ...versionPath(c), provider: c.ctx.params.provider ?? "", architecture: c.ctx.params.arch ?? "" };
}

export function boxHref(c: ConsoleReq, name = c.ctx.params.box ?? ""): string {
  return `/${seg(c.ctx.params.user ?? "")}/boxes/${seg(name)}`;
}

export function versionHref(c: ConsoleReq, version = c.ctx.params.version ?? ""): string {
  return `${boxHref(c)}/versions/${seg(version)}`;
}

export function requireSignedIn(c: ConsoleReq): void {
  if (!c.user) throw new ApiError(401, "Sign in first.");
}

/**
 * Runs a registry write for a form post; 303 to `done` with a notice, or back to `back` with the registry's
 * messages when it refused (422, 402, 403, 409).
 */
export async function write<T>(
  c: ConsoleReq,
  run: () => Promise<T>,
  done: (answer: T) => string,
  notice: string,
  back: string,
): Promise<Response> {
  try {
    const answer = await run();
    return seeOther(c, done(answer), notice);
  } catch (err) {
    if (err instanceof ApiError && [402, 403, 409, 422].includes(err.status)) {
      return seeOther(c, back, undefined, {}, errorMessages(err));
    }
    throw err;
  }
}

function boxFields(form: Form) {
  return {
    short_description: field(form, "short_description"),
    description: form.get("description") ?? "",
    is_private: checked(form, "private"),
  };
}

export function newBoxPage(c: ConsoleReq): Response {
  requireSignedIn(c);
  const owner = c.ctx.url.searchParams.get("owner") ?? c.user!.username;
  const orgs = [...c.reg.store.list<{ name: string; members: { username: string }[] }>("registry/orgs")]
    .filter((o) => o.doc.members.some((m) => m.username.toLowerCase() === c.caller.userKey))
    .map((o) => o.doc.name);
  const owners = [c.user!.username, ...orgs];
  if (!owners.some((o) => o.toLowerCase() === owner.toLowerCase())) owners.push(owner);
  const body = html`
    <h1>New box</h1>
    <form class="stack" method="post" action="/ui/boxes/new">${csrfField(c)}
      <div><label for="owner">Owner</label><select id="owner" name="owner">${owners.map((o) =>
        html`
          <option value="${o}" ${o.toLowerCase() === owner.toLowerCase()
            ? html`
              selected
            `
            : ""}>${o}</option>
        `
      )}</select></div>
      <div><label for="name">Name <span class="hint">(letters, digits, . _ -)</span></label>
      <input type="text" id="name" name="name" required maxlength="100"></div>
      <div><label for="short_description">Short description</label>
      <input type="text" id="short_description" name="short_description" maxlength="255"></div>
      <div><label for="description">Description <span class="hint">(Markdown)</span></label>
      <textarea id="description" name="description"></textarea></div>
      <div class="check"><input type="checkbox" id="private" name="private" checked>
      <label for="private">Private (only you and your organization's members see it)</label></div>
      <div><button type="submit">Create box</button></div></form>
  `;
  return page(c, { title: "New box", body });
}

export async function createBoxPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const owner = field(form, "owner") || c.user!.username;
  const input = { username: owner, name: field(form, "name"), ...boxFields(form) };
  return await write(
    c,
    () => createBox(actor(c), input),
    (b) => `/${seg(c.reg.namespaceName(b.doc.owner) ?? b.doc.owner)}/boxes/${seg(b.doc.name)}`,
    "Box created.",
    `/ui/boxes/new?owner=${encodeURIComponent(owner)}`,
  );
}

export function editBoxPage(c: ConsoleReq): Response {
  requireSignedIn(c);
  // Visibility as GET /api/v2/box; only insiders get the form (the registry checks writes again on save).
  const { box, insider } = visibleBox(c, c.ctx.params.user ?? "", c.ctx.params.box ?? "");
  if (!insider) throw new ApiError(403, "You are not allowed to modify this box.");
  const d = box.doc;
  const body = html`
    <p><a href="${boxHref(c)}">← back to the box</a></p>
    <h1>Edit ${c.ctx.params.user}/${d.name}</h1>
    <form class="stack" method="post" action="/ui/boxes/${seg(c.ctx.params.user ?? "")}/${seg(
      d.name,
    )}/edit">${csrfField(c)}
      <div><label for="name">Name</label><input type="text" id="name" name="name" value="${d
        .name}" required maxlength="100"></div>
      <div><label for="short_description">Short description</label>
      <input type="text" id="short_description" name="short_description" value="${d.short_description ??
        ""}" maxlength="255"></div>
      <div><label for="description">Description <span class="hint">(Markdown)</span></label>
      <textarea id="description" name="description">${d.description ?? ""}</textarea></div>
      <div class="check"><input type="checkbox" id="private" name="private"${d.private
        ? html`
          checked
        `
        : ""}>
      <label for="private">Private</label></div>
      <div><button type="submit">Save</button></div></form>
  `;
  return page(c, { title: `Edit ${d.name}`, body });
}

export async function editBoxPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const input = { name: field(form, "name"), ...boxFields(form) };
  const [owner, name] = [c.ctx.params.user ?? "", c.ctx.params.box ?? ""];
  return await write(
    c,
    () => updateBox(actor(c), owner, name, input),
    (b) => boxHref(c, b.doc.name),
    "Box saved.",
    `${c.ctx.url.pathname}`,
  );
}

/** A confirmation page for a destructive step: one POST form, and a way back. */
export function confirmPage(
  c: ConsoleReq,
  title: string,
  text: string,
  action: string,
  button: string,
  back: string,
) {
  const body = html`
    <h1>${title}</h1>
    <p>${text}</p>
    <form method="post" action="${action}" class="actions">${csrfField(c)}
      <button type="submit" class="danger">${button}</button> <a href="${back}">Cancel</a></form>
  `;
  return page(c, { title, body });
}

export function deleteBoxConfirm(c: ConsoleReq): Response {
  requireSignedIn(c);
  const tag = `${c.ctx.params.user}/${c.ctx.params.box}`;
  return confirmPage(
    c,
    `Delete ${tag}?`,
    "Every version, provider and uploaded file of this box is deleted. This cannot be undone.",
    c.ctx.url.pathname,
    `Delete ${tag}`,
    boxHref(c),
  );
}

export async function deleteBoxPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  return await write(
    c,
    () => deleteBox(actor(c), c.ctx.params.user ?? "", c.ctx.params.box ?? "", () => undefined),
    () => `/${seg(c.ctx.params.user ?? "")}`,
    "Box deleted.",
    boxHref(c),
  );
}

export function newVersionPage(c: ConsoleReq): Response {
  requireSignedIn(c);
  const body = html`
    <p><a href="${boxHref(c)}">← back to the box</a></p>
    <h1>New version of ${c.ctx.params.user}/${c.ctx.params.box}</h1>
    <form class="stack" method="post" action="${c.ctx.url.pathname}">${csrfField(c)}
      <div><label for="version">Version <span class="hint">(like 1.0.0)</span></label>
      <input type="text" id="version" name="version" required maxlength="64"></div>
      <div><label for="description">Description <span class="hint">(Markdown)</span></label>
      <textarea id="description" name="description"></textarea></div>
      <div><button type="submit">Create version</button></div></form>
  `;
  return page(c, { title: "New version", body });
}

export async function createVersionPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const input = { version: field(form, "version"), description: form.get("description") ?? "" };
  const [owner, name] = [c.ctx.params.user ?? "", c.ctx.params.box ?? ""];
  return await write(
    c,
    () => createVersion(actor(c), owner, name, input),
    (r) => versionHref(c, r.version.version),
    "Version created: add providers, upload their files, then release it.",
    c.ctx.url.pathname,
  );
}

export async function editVersionPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const input = { description: form.get("description") ?? "" };
  return await write(
    c,
    () => updateVersion(actor(c), versionPath(c), input),
    () => versionHref(c),
    "Description saved.",
    versionHref(c),
  );
}

/** The confirmation page before `verb` ("Revoke", "Delete") acts on the version the path names. */
function versionConfirm(c: ConsoleReq, verb: string, text: string): Response {
  requireSignedIn(c);
  const button = `${verb} v${c.ctx.params.version}`;
  return confirmPage(c, `${button}?`, text, c.ctx.url.pathname, button, versionHref(c));
}

/** A form post running `step` on the version the path names; 303 to `done` with `notice`, or back to the version. */
async function versionStep(
  c: ConsoleReq,
  step: (who: Actor, at: VersionPath) => Promise<unknown>,
  notice: string,
  done = () => versionHref(c),
): Promise<Response> {
  await signedInForm(c);
  return await write(c, () => step(actor(c), versionPath(c)), done, notice, versionHref(c));
}

export function releasePost(c: ConsoleReq): Promise<Response> {
  return versionStep(c, releaseVersion, "Version released.");
}

export function revokeConfirm(c: ConsoleReq): Response {
  return versionConfirm(
    c,
    "Revoke",
    "A revoked version is no longer offered to Vagrant or shown to others; it cannot be released again.",
  );
}

export function revokePost(c: ConsoleReq): Promise<Response> {
  return versionStep(c, revokeVersion, "Version revoked.");
}

export function deleteVersionConfirm(c: ConsoleReq): Response {
  return versionConfirm(c, "Delete", "The version, its providers and their files are deleted.");
}

export function deleteVersionPost(c: ConsoleReq): Promise<Response> {
  return versionStep(c, deleteVersion, "Version deleted.", () => boxHref(c));
}
