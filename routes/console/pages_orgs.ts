// An organization's page for its members: members and roles (pages_org_members.ts; owners and admins add, change
// and remove direct ones) and service principals (create with the secret shown once, delete) through the
// registry's services, which allow admins and the organization's owners.

import { ApiError } from "../../lib/errors.ts";
import { orgRole } from "../registry/core/caller.ts";
import { deleteMember, putMember } from "../registry/services/orgs.ts";
import { createPrincipal, deletePrincipal, listPrincipals } from "../registry/services/principals.ts";
import { actor, type ConsoleReq, errorMessages, orgHref } from "./context.ts";
import { field, signedInForm } from "./forms.ts";
import { groupBindingsSection } from "./pages_org_groups.ts";
import { membersSection, roleSelect } from "./pages_org_members.ts";
import { dataTable, html, seg, timeTag } from "./html.ts";
import { buttonForm, csrfField, page, seeOther } from "./layout.ts";
import { writeBack } from "./write_back.ts";

function orgOf(c: ConsoleReq) {
  if (!c.user || !c.caller.userKey) throw new ApiError(401, "Sign in first.");
  const org = c.reg.org(c.ctx.params.org ?? "");
  if (!org) throw new ApiError(404, "Resource not found!");
  const role = orgRole(org.doc, c.caller.userKey, c.caller.groups);
  if (!role && !c.user.admin) throw new ApiError(404, "Resource not found!");
  return { org, manager: c.user.admin || role === "owner" };
}

export function orgPage(c: ConsoleReq): Response {
  const { org, manager } = orgOf(c);
  const name = org.doc.name;
  const shown = c.session?.shownOnce?.label === "sp" ? c.session.shownOnce : undefined;
  if (shown) c.session!.shownOnce = undefined;
  const principals = manager ? listPrincipals(actor(c), name) : [];
  const body = html`
    <h1>${name} <span class="tag">organization</span></h1>
      <p><a href="/${seg(name)}">Boxes of ${name}</a></p>
      ${membersSection(c, name, manager)}
      ${manager
        ? html`<h3>Add a member</h3><form class="stack" method="post" action="${orgHref(c)}/members">${
          csrfField(c)
        }
    <div><label for="member-username">Username</label><input type="text" id="member-username" name="username" required></div>
    <div><label for="member-role">Role</label>${roleSelect("member-role", "member")}</div>
    <div><button type="submit">Add member</button></div></form>
    ${groupBindingsSection(c, name)}
    <h2>Service principals</h2>
    <p>What CI pipelines use instead of a password: <code>HCP_CLIENT_ID</code> and <code>HCP_CLIENT_SECRET</code>,
    with <code>HCP_AUTH_URL=${c.origin}</code> and <code>VAGRANT_SERVER_URL=${c.origin}</code>.</p>
    ${
          shown
            ? html`
              <section class="panel" aria-labelledby="new-sp">
                <h3 id="new-sp">New service principal</h3>
                <p>Client id: <code>${shown.extra?.client_id ?? ""}</code></p>
                <p>Client secret (shown only once): </p>
                <p class="secret" id="sp-secret">${shown.value}</p>
              </section>
            `
            : ""
        }
    ${
          principals.length === 0 ? html`<p class="muted">No service principals.</p>` : html`
            ${dataTable(
              ["Name", "Client id", "Created", "Last used", "Delete"],
              principals.map((p) =>
                html`
                  <tr>
                    <td>${p.name}</td>
                    <td><code>${p.client_id}</code></td>
                    <td>${timeTag(p.created_at)}</td>
                    <td>${timeTag(p.last_used_at)}</td>
                    <td>
                      ${buttonForm(
                        c,
                        `${orgHref(c)}/service-principals/${seg(p.client_id ?? "")}/delete`,
                        "Delete",
                        p.name ?? "",
                      )}
                    </td>
                  </tr>
                `
              ),
            )}
          `
        }
    <form class="stack" method="post" action="${orgHref(c)}/service-principals">${csrfField(c)}
    <div><label for="sp-name">Name</label><input type="text" id="sp-name" name="name" required maxlength="255"></div>
    <div><button type="submit">Create service principal</button></div></form>`
        : ""}
  `;
  return page(c, { title: name, body });
}

function orgWrite(c: ConsoleReq, write: () => Promise<unknown>, notice: string): Promise<Response> {
  return writeBack(c, orgHref(c), write, notice, [403, 404, 409, 422]);
}

export async function addMemberPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const [org, username] = [c.ctx.params.org ?? "", field(form, "username")];
  if (!username) return seeOther(c, orgHref(c), undefined, {}, ["Username can't be blank"]);
  const input = { role: field(form, "role") };
  return await orgWrite(c, () => putMember(actor(c), org, username, input), "Member saved.");
}

export async function setMemberPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const [org, username] = [c.ctx.params.org ?? "", c.ctx.params.member ?? ""];
  const input = { role: field(form, "role") };
  return await orgWrite(c, () => putMember(actor(c), org, username, input), "Role saved.");
}

export async function removeMemberPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  const [org, username] = [c.ctx.params.org ?? "", c.ctx.params.member ?? ""];
  return await orgWrite(c, () => deleteMember(actor(c), org, username), "Member removed.");
}

export async function createPrincipalPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  try {
    const created = await createPrincipal(actor(c), c.ctx.params.org ?? "", { name: field(form, "name") });
    c.session!.shownOnce = {
      label: "sp",
      value: created.client_secret,
      extra: { client_id: created.client_id },
    };
    return seeOther(c, orgHref(c), "Service principal created.");
  } catch (err) {
    if (err instanceof ApiError && [403, 422].includes(err.status)) {
      return seeOther(c, orgHref(c), undefined, {}, errorMessages(err));
    }
    throw err;
  }
}

export async function deletePrincipalPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  const [org, clientId] = [c.ctx.params.org ?? "", c.ctx.params.client_id ?? ""];
  return await orgWrite(c, () => deletePrincipal(actor(c), org, clientId), "Service principal deleted.");
}
