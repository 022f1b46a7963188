// Admin pages of "one identity" (docs/web.md#identity-pages): a user's link to a person of the auth methods
// (link, unlink: unlinking revokes the user's API tokens) and the administrator groups, through the registry's
// services as the admin API calls them.

import { groupChoices, namedAdminGroups, namedIdentity } from "../registry/services/group_binding_names.ts";
import { putAdminGroups } from "../registry/services/group_bindings.ts";
import { linkIdentity, unlinkIdentity } from "../registry/services/identities.ts";
import { actor, type ConsoleReq, requireAdminViewer } from "./context.ts";
import { field, signedInForm } from "./forms.ts";
import { type Html, html, seg } from "./html.ts";
import { csrfField, page } from "./layout.ts";
import { writeBack } from "./write_back.ts";

function userHref(c: ConsoleReq): string {
  return `/ui/admin/users/${seg(c.ctx.params.name ?? "")}`;
}

export function adminUserPage(c: ConsoleReq): Response {
  requireAdminViewer(c);
  const name = c.ctx.params.name ?? "";
  const { userId, accountMethods } = namedIdentity(actor(c), name);
  const linked = html`
    <p>Linked to person <code id="person-id">${userId ?? ""}</code>${accountMethods.length
      ? html`, who signs in through: ${accountMethods.join(", ")}`
      : ""}.</p>
    <form class="stack" method="post" action="${userHref(c)}/identity/delete">${csrfField(c)}
    <p class="hint" id="unlink-hint">Unlinking also revokes every API token of ${name}.</p>
    <div><button type="submit" class="danger" aria-describedby="unlink-hint">Unlink<span class="skip"> ${name}</span></button></div></form>
  `;
  const unlinked = html`
    <p>Not linked to a person of the auth methods: ${name} signs in with the registry's password only.</p>
    <form class="stack" method="post" action="${userHref(c)}/identity">${csrfField(c)}
    <div><label for="link-user-id">Auth-method user id <span class="hint">(u_…)</span></label>
    <input type="text" id="link-user-id" name="user_id" required maxlength="128"></div>
    <div><button type="submit">Link</button></div></form>
  `;
  const body = html`
    <h1>${name} <span class="tag">user</span></h1>
    <p><a href="/ui/admin">Administration</a> · <a href="/${seg(name)}">Profile of ${name}</a></p>
    <h2>Identity</h2>
    ${userId ? linked : unlinked}
  `;
  return page(c, { title: name, body });
}

function userWrite(c: ConsoleReq, run: () => Promise<unknown>, notice: string): Promise<Response> {
  requireAdminViewer(c);
  return writeBack(c, userHref(c), run, notice, [404, 409, 422]);
}

export async function linkIdentityPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const name = c.ctx.params.name ?? "";
  const input = { user_id: field(form, "user_id") };
  return await userWrite(c, () => linkIdentity(actor(c), name, input), `${name} linked.`);
}

export async function unlinkIdentityPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  const name = c.ctx.params.name ?? "";
  return await userWrite(
    c,
    () => unlinkIdentity(actor(c), name),
    `${name} unlinked; the user's API tokens were revoked.`,
  );
}

/** The "Administrator groups" section of /ui/admin: each managed group a checkbox, the bound ones checked. */
export function adminGroupsSection(c: ConsoleReq): Html {
  const bound = namedAdminGroups(actor(c));
  const ids = new Set(bound.map((g) => g.id));
  const choices = groupChoices(c.reg);
  // A bound group the choices leave out (past the limit) stays bound: it is offered too.
  const offered = [...choices, ...bound.filter((g) => !choices.some((x) => x.id === g.id))];
  return html`
    <h2>Administrator groups</h2>
    <p>Members of these managed groups are registry administrators while their last sign-in put them in the group.</p>
    ${offered.length === 0
      ? html`<p class="muted">There are no managed groups (an auth-method administrator creates them).</p>`
      : html`<form class="stack" method="post" action="/ui/admin/admin-groups">${csrfField(c)}
      <fieldset><legend>Administrator groups</legend>${
        offered.map((g, i) =>
          html`
            <div
              class="check"><input type="checkbox" id="admin-group-${i}" name="admin_groups" value="${g
                .id}"${ids.has(g.id)
                ? html`
                  checked
                `
                : ""}><label for="admin-group-${i}">${g.name} (${g.methodName}) <code>${g
                .id}</code></label></div>
          `
        )
      }</fieldset>
      <div><button type="submit">Save administrator groups</button></div></form>`}
  `;
}

export async function adminGroupsPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  requireAdminViewer(c);
  const input = { admin_groups: form.getAll("admin_groups") };
  const save = () => putAdminGroups(actor(c), input);
  return await writeBack(c, "/ui/admin", save, "Administrator groups saved.", [409, 422]);
}
