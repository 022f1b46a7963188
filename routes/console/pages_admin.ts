// Admin pages (admins only, as the admin API): users (create, delinquent, reset two-factor), organizations
// (create with a first owner, delinquent) and maintenance mode, each through the registry service the admin
// API calls.

import { ApiError } from "../../lib/errors.ts";
import type { IdentityMethod } from "../../lib/identity.ts";
import { renderAdminUser, renderOrg } from "../registry/services/accounts.ts";
import { getMaintenance, putMaintenance } from "../registry/services/maintenance.ts";
import {
  getSignInMethods,
  putSignInMethods,
  signInAuthMethods,
} from "../registry/services/sign_in_methods.ts";
import { createOrg, listOrgs, updateOrg } from "../registry/services/orgs.ts";
import { removeTotp } from "../registry/services/twofactor.ts";
import { createUser, listUsers, updateUser } from "../registry/services/users_admin.ts";
import { actor, type ConsoleReq, errorMessages, requireAdminViewer } from "./context.ts";
import { checked, field, signedInForm } from "./forms.ts";
import { dataTable, html, seg } from "./html.ts";
import { buttonForm, csrfField, page, seeOther } from "./layout.ts";
import { adminGroupsSection } from "./pages_admin_identity.ts";

export function adminPage(c: ConsoleReq): Response {
  requireAdminViewer(c);
  const who = actor(c);
  const users = listUsers(who).map((u) => renderAdminUser(c.reg, u));
  const orgs = listOrgs(who).map(renderOrg);
  const maintenance = getMaintenance(who);
  const signIn = getSignInMethods(who).methods;
  // Each listed auth method read once for the whole list.
  const named = new Map(signInAuthMethods(c.reg).map((m) => [m.id, m]));
  users.sort((a, b) => a.username.localeCompare(b.username));
  orgs.sort((a, b) => a.name.localeCompare(b.name));
  const toggle = (action: string, label: string, on: boolean, what: string) =>
    html`<form class="inline" method="post" action="${action}">${csrfField(c)}
    <input type="hidden" name="value" value="${on ? "false" : "true"}">
    <button type="submit" class="secondary">${label}<span class="skip"> ${what}</span></button></form>`;
  const body = html`
    <h1>Administration</h1>
      <h2>Maintenance mode</h2>
      <p>Maintenance mode is <strong>${maintenance.enabled ? "on" : "off"}</strong>${maintenance.forced
        ? " (forced by WHARF_MAINTENANCE)"
        : ""}. While it is on, only administrators can use the registry.</p>
      ${maintenance.forced ? "" : toggle(
        "/ui/admin/maintenance",
        maintenance.enabled ? "Turn maintenance off" : "Turn maintenance on",
        maintenance.enabled,
        "",
      )}
      <h2>Sign-in methods</h2>
      <p>People sign in through these, in order: <code>registry</code> is the registry's own passwords, the others
      are auth methods (password, ldap, oidc).</p>
      <ol>${signIn.map((id) => html`<li><code>${id}</code>${signInLabel(named.get(id))}</li>`)}</ol>
      <form class="stack" method="post" action="/ui/admin/sign-in-methods">${csrfField(c)}
      <div><label for="sign-in-methods">Sign-in methods <span class="hint">(ids in order, separated by commas)</span></label>
      <input type="text" id="sign-in-methods" name="methods" value="${signIn.join(", ")}" required></div>
      <div><button type="submit">Save sign-in methods</button></div></form>
      ${adminGroupsSection(c)}
      <h2>Users</h2>
      ${dataTable(
        ["User", "E-mail", "Admin", "Two-factor", "Billing", "Manage"],
        users.map((u) =>
          html`
            <tr>
              <td><a href="/ui/admin/users/${seg(u.username)}">${u.username}</a></td>
              <td>${u.email ?? ""}</td>
              <td>${u.admin ? "yes" : "no"}</td>
              <td>${u.two_factor_enabled ? u.two_factor.delivery_methods.join(", ") : "off"}</td>
              <td>${u.delinquent ? "delinquent" : "ok"}</td>
              <td class="actions">${toggle(
                `/ui/admin/users/${seg(u.username)}/delinquent`,
                u.delinquent ? "Clear delinquent" : "Mark delinquent",
                u.delinquent,
                u.username,
              )}${u.two_factor_enabled || u.two_factor.delivery_methods.length
                ? buttonForm(
                  c,
                  `/ui/admin/users/${seg(u.username)}/reset-2fa`,
                  "Reset two-factor",
                  `of ${u.username}`,
                )
                : ""}</td>
            </tr>
          `
        ),
      )}
      <h3>Create a user</h3>
      <form class="stack" method="post" action="/ui/admin/users">${csrfField(c)}
      <div><label for="new-username">Username</label><input type="text" id="new-username" name="username" required></div>
      <div><label for="new-email">E-mail</label><input type="email" id="new-email" name="email" required></div>
      <div><label for="new-password">Password <span class="hint">(at least 8 characters)</span></label>
      <input type="password" id="new-password" name="password" required autocomplete="new-password"></div>
      <div class="check"><input type="checkbox" id="new-admin" name="admin"><label for="new-admin">Administrator</label></div>
      <div><button type="submit">Create user</button></div></form>
      <h2>Organizations</h2>
      ${dataTable(
        ["Organization", "Members", "Billing", "Manage"],
        orgs.map((o) =>
          html`
            <tr>
              <td><a href="/ui/orgs/${seg(o.name)}">${o.name}</a></td>
              <td>${o.members.length}</td>
              <td>${o.delinquent ? "delinquent" : "ok"}</td>
              <td>${toggle(
                `/ui/admin/orgs/${seg(o.name)}/delinquent`,
                o.delinquent ? "Clear delinquent" : "Mark delinquent",
                o.delinquent,
                o.name,
              )}</td>
            </tr>
          `
        ),
      )}
      <h3>Create an organization</h3>
      <form class="stack" method="post" action="/ui/admin/orgs">${csrfField(c)}
      <div><label for="org-name">Name</label><input type="text" id="org-name" name="name" required></div>
      <div><label for="org-owner">First owner <span class="hint">(a username; optional)</span></label>
      <input type="text" id="org-owner" name="owner"></div>
      <div><button type="submit">Create organization</button></div></form>
  `;
  return page(c, { title: "Administration", body });
}

async function adminWrite(c: ConsoleReq, write: () => Promise<unknown>, notice: string) {
  requireAdminViewer(c);
  try {
    await write();
    return seeOther(c, "/ui/admin", notice);
  } catch (err) {
    if (err instanceof ApiError && [404, 409, 422].includes(err.status)) {
      return seeOther(c, "/ui/admin", undefined, {}, errorMessages(err));
    }
    throw err;
  }
}

export async function createUserPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const user = {
    username: field(form, "username"),
    email: field(form, "email"),
    password: form.get("password") ?? "",
    admin: checked(form, "admin"),
  };
  return await adminWrite(c, () => createUser(actor(c), user), `User ${user.username} created.`);
}

export async function userDelinquentPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const name = c.ctx.params.name ?? "";
  const input = { delinquent: field(form, "value") === "true" };
  return await adminWrite(c, () => updateUser(actor(c), name, input), `Billing state of ${name} saved.`);
}

export async function resetTwoFactorPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  requireAdminViewer(c);
  const name = c.ctx.params.name ?? "";
  try {
    const who = actor(c);
    await removeTotp(who, { user: name });
    await updateUser(who, name, { two_factor_enabled: false });
  } catch (err) {
    if (err instanceof ApiError && [404, 422].includes(err.status)) {
      return seeOther(c, "/ui/admin", undefined, {}, errorMessages(err));
    }
    throw err;
  }
  return seeOther(c, "/ui/admin", `Two-factor authentication of ${name} was reset.`);
}

export async function createOrgPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const owner = field(form, "owner");
  const organization: Record<string, unknown> = { name: field(form, "name") };
  if (owner) organization.members = [{ username: owner, role: "owner" }];
  return await adminWrite(
    c,
    () => createOrg(actor(c), organization),
    `Organization ${field(form, "name")} created.`,
  );
}

export async function orgDelinquentPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const name = c.ctx.params.name ?? "";
  const input = { delinquent: field(form, "value") === "true" };
  return await adminWrite(c, () => updateOrg(actor(c), name, input), `Billing state of ${name} saved.`);
}

/** " (NAME, TYPE)" of an auth method in the sign-in list ("" for `registry` and a method that is gone). */
function signInLabel(m: IdentityMethod | undefined): string {
  return m ? ` (${m.name ?? "unnamed"}, ${m.type})` : "";
}

export async function signInMethodsPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const methods = field(form, "methods").split(",").map((m) => m.trim()).filter((m) => m !== "");
  return await adminWrite(c, () => putSignInMethods(actor(c), { methods }), "Sign-in methods saved.");
}

export async function maintenancePost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const input = { enabled: field(form, "value") === "true" };
  return await adminWrite(c, () => putMaintenance(actor(c), input), "Maintenance mode saved.");
}
