// The box a console page shows (visible to the viewer by the registry's rule) and its providers' table, shared by
// the box page and the version management parts.

import type { StoredDoc } from "../../lib/store/mod.ts";
import { visibleBox } from "../registry/services/boxes.ts";
import { type BoxDoc, type ProviderDoc, providerIsValid, type VersionDoc } from "../registry/core/model.ts";
import { downloadUrl, type View } from "../registry/core/render.ts";
import type { ConsoleReq } from "./context.ts";
import { dataTable, formatBytes, type Html, html, seg } from "./html.ts";

export interface ShownBox {
  box: StoredDoc<BoxDoc>;
  insider: boolean;
  owner: string;
  view: View;
  /** /:owner/boxes/:name */
  base: string;
}

/** The box named by the path when the viewer may see it (the registry's rule; 404 otherwise). */
export function shownBox(c: ConsoleReq): ShownBox {
  const { box, insider } = visibleBox(c, c.ctx.params.user ?? "", c.ctx.params.box ?? "");
  const owner = c.reg.namespaceName(box.doc.owner) ?? box.doc.owner;
  return {
    box,
    insider,
    owner,
    view: { reg: c.reg, origin: c.origin, insider, api: 2 },
    base: `/${seg(owner)}/boxes/${seg(box.doc.name)}`,
  };
}

function checksumOf(p: ProviderDoc): { type: string; value: string } | undefined {
  if (p.checksum && p.checksum_type) return { type: p.checksum_type, value: p.checksum };
  if (p.blob) return { type: "sha256", value: p.blob.sha256 };
  return undefined;
}

export function providerTable(s: ShownBox, v: VersionDoc, actions?: (p: ProviderDoc) => Html): Html {
  if (v.providers.length === 0) return html`<p class="muted">No providers yet.</p>`;
  const rows = [...v.providers].sort((a, b) =>
    a.name === b.name ? a.architecture.localeCompare(b.architecture) : a.name.localeCompare(b.name)
  ).map((p) => {
    const sum = checksumOf(p);
    const valid = providerIsValid(p);
    return html`<tr><td>${p.name}</td><td>${p.architecture}${
      p.default_architecture
        ? html`
          <span class="tag">default</span>
        `
        : ""
    }</td>
      <td>${p.blob ? formatBytes(p.blob.size) : p.url ? "external" : "—"}</td>
      <td class="hash">${sum ? html`${sum.type}: ${sum.value}` : "—"}</td>
      <td>${
      valid
        ? html`<a href="${
          downloadUrl(s.view, s.box.doc, v, p)
        }" download>Download<span class="skip"> ${p.name} ${p.architecture}</span></a>`
        : html`<span class="muted">no file yet</span>`
    }</td>${actions ? html`<td>${actions(p)}</td>` : ""}</tr>`;
  });
  return dataTable(
    ["Provider", "Architecture", "Size", "Checksum", "File", actions !== undefined && "Manage"],
    rows,
  );
}
