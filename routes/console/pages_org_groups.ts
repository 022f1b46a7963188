// An organization's "Directory groups" (docs/web.md#directory-groups): the managed groups bound to its roles,
// a form to bind one and a remove button per binding, for owners and admins, through the registry's services.

import { groupChoices, namedOrgBindings } from "../registry/services/group_binding_names.ts";
import { bindOrgGroup, unbindOrgGroup } from "../registry/services/group_bindings.ts";
import { actor, type ConsoleReq, orgHref } from "./context.ts";
import { field, signedInForm } from "./forms.ts";
import { dataTable, type Html, html, seg } from "./html.ts";
import { buttonForm, csrfField } from "./layout.ts";
import { writeBack } from "./write_back.ts";

/** The section (only for those who manage the organization: members cannot read bindings, as in the API). */
export function groupBindingsSection(c: ConsoleReq, orgName: string): Html {
  const bindings = namedOrgBindings(actor(c), orgName);
  const choices = groupChoices(c.reg);
  const list = bindings.length === 0 ? html`<p class="muted">No directory groups are bound.</p>` : dataTable(
    ["Managed group", "Auth method", "Role", "Remove"],
    bindings.map((b) =>
      html`
        <tr>
          <td>${b.group.name} <code>${b.managed_group_id}</code></td>
          <td>${b.group.methodName}</td>
          <td>${b.role}</td>
          <td>
            ${buttonForm(
              c,
              `${orgHref(c)}/group-bindings/${seg(b.managed_group_id)}/delete`,
              "Remove",
              `group ${b.group.name}`,
            )}
          </td>
        </tr>
      `
    ),
    `Directory groups of ${orgName}`,
  );
  const form = choices.length === 0
    ? html`<p class="muted">There are no managed groups to bind (an auth-method administrator creates them).</p>`
    : html`<form class="stack" method="post" action="${orgHref(c)}/group-bindings">${csrfField(c)}
    <div><label for="bind-group">Managed group</label><select id="bind-group" name="managed_group_id">${
      choices.map((g) => html`<option value="${g.id}">${g.name} (${g.methodName})</option>`)
    }</select></div>
    <div><label for="bind-role">Role</label><select id="bind-role" name="role">
      <option value="member">member</option><option value="owner">owner</option></select></div>
    <div><button type="submit">Bind group</button></div></form>`;
  return html`
    <h2>Directory groups</h2>
    <p>Members of a bound managed group hold its role in ${orgName} as long as their last sign-in put them
    in the group.</p>
    ${list}
    <h3>Bind a managed group</h3>
    ${form}
  `;
}

function write(c: ConsoleReq, run: () => Promise<unknown>, notice: string): Promise<Response> {
  return writeBack(c, orgHref(c), run, notice, [403, 404, 409, 422]);
}

export async function bindGroupPost(c: ConsoleReq): Promise<Response> {
  const form = await signedInForm(c);
  const input = { managed_group_id: field(form, "managed_group_id"), role: field(form, "role") };
  return await write(
    c,
    () => bindOrgGroup(actor(c), c.ctx.params.org ?? "", input),
    "Directory group bound.",
  );
}

export async function unbindGroupPost(c: ConsoleReq): Promise<Response> {
  await signedInForm(c);
  const [org, groupId] = [c.ctx.params.org ?? "", c.ctx.params.group ?? ""];
  return await write(c, () => unbindOrgGroup(actor(c), org, groupId), "Directory group removed.");
}
