// An organization's members on its page (docs/web.md#organizations): direct members and those a bound directory
// group grants a role, each with how they got it, a page at a time, through the registry's members service.

import { type EffectiveMember, listOrgMembers, type MemberSource } from "../registry/services/org_members.ts";
import { actor, type ConsoleReq, orgHref } from "./context.ts";
import { dataTable, type Html, html, seg } from "./html.ts";
import { buttonForm, csrfField } from "./layout.ts";

function sourceText(s: MemberSource): string {
  return s.type === "direct"
    ? `direct (${s.role})`
    : `via group ${s.group_name} of ${s.auth_method_name} (${s.role})`;
}

/** A role picker (member, owner) with `role` chosen. */
export function roleSelect(id: string, role: string): Html {
  return html`<select id="${id}" name="role">${
    ["member", "owner"].map((r) => html`<option value="${r}" ${r === role ? "selected" : ""}>${r}</option>`)
  }</select>`;
}

/** The forms changing and removing a direct membership (a group's grant is changed in the directory). */
function manageCell(c: ConsoleReq, m: EffectiveMember, i: number): Html {
  const direct = m.sources.find((s) => s.type === "direct");
  if (!direct) return html`<td class="muted">through the directory group</td>`;
  const action = `${orgHref(c)}/members/${seg(m.username)}`;
  return html`
    <td>
      <form class="inline" method="post" action="${action}">${csrfField(c)}
        <label class="skip" for="role-${i}">Direct role of ${m.username}</label>${roleSelect(
          `role-${i}`,
          direct.role,
        )}
        <button type="submit" class="secondary">Save<span class="skip"> role of ${m
          .username}</span></button></form>
      ${buttonForm(c, `${action}/delete`, "Remove", m.username)}
    </td>
  `;
}

/** The "Members" section: one page of members (`?page=`), with management forms for `manager`. */
export function membersSection(c: ConsoleReq, orgName: string, manager: boolean): Html {
  const listed = listOrgMembers(actor(c), orgName, { page: c.ctx.url.searchParams.get("page"), limit: null });
  const pages = Math.max(1, Math.ceil(listed.total / listed.limit));
  const link = (page: number, label: string) =>
    html`<a href="${orgHref(c)}?page=${String(page)}">${label}</a>`;
  const nav = pages > 1
    ? html`<p>Page ${String(listed.page)} of ${String(pages)} ${
      listed.page > 1 ? link(listed.page - 1, "Previous page") : ""
    } ${listed.page < pages ? link(listed.page + 1, "Next page") : ""}</p>`
    : "";
  return html`
    <h2>Members</h2>
    <p class="muted">A member of a bound directory group is listed once they have signed in since they joined it
    (wharf learns a person's groups at each sign-in); until then they hold no role here.</p>
    ${dataTable(
      ["User", "Role", "How", manager && "Direct membership"],
      listed.members.map((m, i) =>
        html`<tr><td><a href="/${seg(m.username)}">${m.username}</a></td><td>${m.role}</td>
        <td>${m.sources.map(sourceText).join("; ")}</td>${manager ? manageCell(c, m, i) : ""}</tr>`
      ),
    )}
    ${nav}
  `;
}
