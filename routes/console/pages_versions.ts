// The writer's part of a version page: edit its description, release, revoke and delete (confirmed), add a
// provider with an architecture, upload a provider's file (progress bar with JavaScript; without it, the upload
// URL and a curl command), delete a provider (confirmed).

import { ARCHITECTURES } from "../registry/core/architectures.ts";
import type { ProviderDoc, VersionDoc } from "../registry/core/model.ts";
import type { ConsoleReq } from "./context.ts";
import { type Html, html, seg } from "./html.ts";
import { csrfField } from "./layout.ts";
import { providerTable, type ShownBox } from "./box_view.ts";

/** /ui/boxes/:owner/:box/versions/:version */
export function versionUiBase(s: ShownBox, v: VersionDoc): string {
  return `/ui/boxes/${seg(s.owner)}/${seg(s.box.doc.name)}/versions/${seg(v.version)}`;
}

export function providerUiBase(s: ShownBox, v: VersionDoc, p: ProviderDoc): string {
  return `${versionUiBase(s, v)}/providers/${seg(p.name)}/${seg(p.architecture)}`;
}

function uploadForm(c: ConsoleReq, s: ShownBox, v: VersionDoc, p: ProviderDoc): Html {
  const id = `file-${p.name}-${p.architecture}`;
  return html`<form class="stack" method="post" action="${providerUiBase(s, v, p)}/upload" data-upload>
    ${csrfField(c)}
    <div><label for="${id}">Box file for ${p.name} (${p.architecture})</label>
    <input type="file" id="${id}" name="file" accept=".box,application/octet-stream"></div>
    <progress hidden value="0" max="1" aria-label="Upload progress of ${p.name} ${p.architecture}"></progress>
    <p data-upload-status role="status" class="hint"></p>
    <div><button type="submit">${p.blob ? "Replace file" : "Upload file"}</button></div></form>`;
}

function providerActions(s: ShownBox, v: VersionDoc) {
  return (p: ProviderDoc) =>
    html`<a href="${
      providerUiBase(s, v, p)
    }/delete">Delete<span class="skip"> provider ${p.name} ${p.architecture}</span></a>`;
}

export function versionManagement(c: ConsoleReq, s: ShownBox, v: VersionDoc): Html {
  const base = versionUiBase(s, v);
  const archOptions = ARCHITECTURES.map((a) =>
    html`
      <option value="${a}" ${a === "amd64"
        ? html`
          selected
        `
        : ""}>${a}</option>
    `
  );
  return html`<section class="panel" aria-labelledby="manage"><h2 id="manage">Manage this version</h2>
  <div class="actions">
  ${
    v.status === "unreleased"
      ? html`
        <form class="inline" method="post"
          action="${base}/release">${csrfField(c)}<button type="submit">Release v${v.version}</button></form>
      `
      : ""
  }
  ${
    v.status === "active"
      ? html`<a class="button danger" href="${base}/revoke">Revoke v${v.version}</a>`
      : ""
  }
  <a class="button danger" href="${base}/delete">Delete v${v.version}</a>
  </div>
  <h3>Description</h3>
  <form class="stack" method="post" action="${base}/edit">${csrfField(c)}
  <div><label for="version-description">Description <span class="hint">(Markdown)</span></label>
  <textarea id="version-description" name="description">${v.description ?? ""}</textarea></div>
  <div><button type="submit">Save description</button></div></form>
  <h3>Providers</h3>
  ${providerTable(s, v, providerActions(s, v))}
  ${v.providers.map((p) => uploadForm(c, s, v, p))}
  ${
    v.status === "revoked" ? "" : html`
      <h3>Add a provider</h3>
      <form class="stack" method="post" action="${base}/providers">${csrfField(c)}
        <div><label for="provider-name">Provider</label>
        <input type="text" id="provider-name" name="name" required placeholder="virtualbox, libvirt, vmware_desktop, hyperv"></div>
        <div><label for="provider-architecture">Architecture</label>
        <select id="provider-architecture" name="architecture">${archOptions}</select></div>
        <div class="check"><input type="checkbox" id="provider-default" name="default_architecture">
        <label for="provider-default">Default architecture for this provider</label></div>
        <div><label for="provider-url">External URL <span class="hint">(optional: leave empty to upload a file)</span></label>
        <input type="url" id="provider-url" name="url"></div>
        <div><label for="provider-checksum-type">Checksum type <span class="hint">(optional)</span></label>
        <select id="provider-checksum-type" name="checksum_type"><option value="">none</option>
        ${["sha256", "sha512", "sha384", "sha1", "md5"].map((t) =>
          html`<option value="${t}">${t}</option>`
        )}</select></div>
        <div><label for="provider-checksum">Checksum <span class="hint">(optional, hex)</span></label>
        <input type="text" id="provider-checksum" name="checksum"></div>
        <div><button type="submit">Add provider</button></div></form>
    `
  }
  </section>`;
}
