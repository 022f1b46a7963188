// A box's page and one version's page: description (Markdown, raw HTML escaped), how to use it, every version
// the viewer may see (visibility as GET /api/v2/box: the registry's visibleBox), providers per architecture with
// size, checksum and download link; for writers, links to the publishing actions.

import { type VersionDoc } from "../registry/core/model.ts";
import { currentVersion, markdownHtml, sortedVersions } from "../registry/core/render.ts";
import { notFound } from "../registry/core/errors.ts";
import { type ConsoleReq } from "./context.ts";
import { type Html, html, seg, timeTag, trusted } from "./html.ts";
import { page } from "./layout.ts";
import { versionManagement } from "./pages_versions.ts";
import { providerTable, type ShownBox, shownBox } from "./box_view.ts";

function statusTag(v: VersionDoc): Html {
  return html`<span class="tag status-${v.status}">${v.status}</span>`;
}

function usage(c: ConsoleReq, s: ShownBox): Html {
  const tag = `${s.owner}/${s.box.doc.name}`;
  return html`<aside class="panel" aria-labelledby="how-to"><h2 id="how-to">How to use this box</h2>
  <p>In a Vagrantfile:</p><pre id="use-vagrantfile">config.vm.box = "${tag}"</pre>
  <p>Point Vagrant at this registry, then add the box:</p>
  <pre id="use-add">export VAGRANT_SERVER_URL=${c.origin}
vagrant box add ${tag}</pre>
  ${
    s.box.doc.private
      ? html`
        <p
          class="hint">This box is private: set <code>VAGRANT_CLOUD_TOKEN</code> to a token of yours (see <a href="/ui/settings/tokens">Tokens</a>).</p>
      `
      : ""
  }
  </aside>`;
}

/** One version: heading (none on its own page, whose h1 names it), description, providers. */
function versionBlock(s: ShownBox, v: VersionDoc, headingLevel: 0 | 3): Html {
  const title = html`<a href="${s.base}/versions/${seg(v.version)}">v${v.version}</a> ${statusTag(v)}`;
  const desc = markdownHtml(v.description);
  return html`<section class="version">${headingLevel === 3 ? html`<h3>${title}</h3>` : ""}
    <p class="muted">Created ${timeTag(v.created_at)}</p>
    ${desc ? html`<div class="markdown">${trusted(desc)}</div>` : ""}
    ${providerTable(s, v)}</section>`;
}

export function boxPage(c: ConsoleReq): Response {
  const s = shownBox(c);
  const doc = s.box.doc;
  const current = currentVersion(doc);
  const versions = sortedVersions(doc).filter((v) => s.insider || v.status === "active");
  const description = markdownHtml(doc.description);
  const writer = s.insider && c.user !== undefined;
  const body = html`<h1>${s.owner}/${doc.name}${
    doc.private
      ? html`
        <span class="tag">private</span>
      `
      : ""
  }</h1>
  ${doc.short_description ? html`<p class="lead">${doc.short_description}</p>` : ""}
  ${
    writer
      ? html`<div class="actions"><a class="button secondary" href="/ui/boxes/${seg(s.owner)}/${
        seg(doc.name)
      }/edit">Edit box</a>
      <a class="button secondary" href="/ui/boxes/${seg(s.owner)}/${
        seg(doc.name)
      }/versions/new">New version</a>
      <a class="button danger" href="/ui/boxes/${seg(s.owner)}/${seg(doc.name)}/delete">Delete box</a></div>`
      : ""
  }
  <div class="cols"><div>
  <p>Owner: <a href="/${seg(s.owner)}">${s.owner}</a> · ${c.reg.downloads.get(s.box.id)} downloads ·
  current version: ${
    current
      ? html`<a href="${s.base}/versions/${seg(current.version)}">v${current.version}</a>`
      : "none released"
  }</p>
  ${description ? html`<div class="markdown">${trusted(description)}</div>` : ""}
  </div>${usage(c, s)}</div>
  <h2>Versions</h2>
  ${
    versions.length
      ? versions.map((v) => versionBlock(s, v, 3))
      : html`<p class="muted">No versions to show.</p>`
  }`;
  return page(c, { title: `${s.owner}/${doc.name}`, body });
}

export function versionPage(c: ConsoleReq): Response {
  const s = shownBox(c);
  const v = s.box.doc.versions.find((x) => x.version === c.ctx.params.version);
  if (!v || (!s.insider && v.status !== "active")) throw notFound();
  const writer = s.insider && c.user !== undefined;
  const body = html`<p><a href="${s.base}">← ${s.owner}/${s.box.doc.name}</a></p>
  <h1>${s.owner}/${s.box.doc.name} v${v.version} ${statusTag(v)}</h1>
  <div class="cols"><div>${versionBlock(s, v, 0)}</div>${usage(c, s)}</div>
  ${writer ? versionManagement(c, s, v) : ""}`;
  return page(c, { title: `${s.owner}/${s.box.doc.name} v${v.version}`, body });
}
