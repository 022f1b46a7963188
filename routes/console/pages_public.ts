// Public pages: the home page (search, most downloaded, newest), search results with the API's rules (the
// registry's search service: same parameters and errors) and a user's or organization's page.

import { ApiError } from "../../lib/errors.ts";
import type { StoredDoc } from "../../lib/store/mod.ts";
import { namespace } from "../registry/services/namespaces.ts";
import { searchBoxes, type SearchInput } from "../registry/services/search.ts";
import { ARCHITECTURES } from "../registry/core/architectures.ts";
import type { BoxDoc } from "../registry/core/model.ts";
import { boxPath, currentVersion, markdownHtml } from "../registry/core/render.ts";
import { actor, type ConsoleReq, errorMessages } from "./context.ts";
import { type Html, html, seg, trusted } from "./html.ts";
import { page } from "./layout.ts";

/** The current version's providers as "name · architecture", each once. */
function providerTags(box: BoxDoc): Html {
  const providers = currentVersion(box)?.providers ?? [];
  const labels = [...new Set(providers.map((p) => `${p.name} · ${p.architecture}`))];
  return html`${
    labels.map((l) =>
      html`
        <span class="tag">${l}</span>
      `
    )
  }`;
}

export function boxList(c: ConsoleReq, boxes: StoredDoc<BoxDoc>[], empty: string): Html {
  if (boxes.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<ul class="boxes">${
    boxes.map((stored) => {
      const b = stored.doc;
      const current = currentVersion(b);
      const owner = c.reg.namespaceName(b.owner) ?? b.owner;
      return html`
        <li>
          <h3><a href="/${seg(owner)}/boxes/${seg(b.name)}">${boxPath(c.reg, b)}</a>${b.private
            ? html`
              <span class="tag">private</span>
            `
            : ""}</h3>
          <p>${b.short_description ?? ""}</p>
          <p class="muted">${current ? html`v${current.version}` : "no released version"} · ${c.reg
            .boxDownloads(stored)} downloads</p>
          <p>${providerTags(b)}</p>
        </li>
      `;
    })
  }</ul>`;
}

const NO_SEARCH: SearchInput = {
  q: null,
  provider: null,
  architecture: null,
  sort: null,
  order: null,
  limit: null,
  page: null,
};

function searchForm(q: string, extra: Html = html``): Html {
  return html`<form class="searchbar" method="get" action="/boxes/search" role="search">
  <div class="grow"><label for="q">Search boxes</label>
  <input type="search" id="q" name="q" value="${q}" placeholder="ubuntu, acme/devbox, …"></div>
  ${extra}
  <div><button type="submit">Search</button></div></form>`;
}

export function homePage(c: ConsoleReq): Response {
  const popular = searchBoxes(actor(c), { ...NO_SEARCH, sort: "downloads", order: "desc", limit: "6" });
  const newest = searchBoxes(actor(c), { ...NO_SEARCH, sort: "created", order: "desc", limit: "6" });
  const body = html`<h1>Find Vagrant boxes</h1>
  ${searchForm("")}
  <h2>Most downloaded</h2>${boxList(c, popular, "No box has been released yet.")}
  <h2>Newest</h2>${boxList(c, newest, "No box has been released yet.")}`;
  return page(c, { title: "Boxes", body });
}

const PAGE_SIZE = 20;

function select(id: string, label: string, value: string, options: [string, string][]): Html {
  return html`<div><label for="${id}">${label}</label><select id="${id}" name="${id}">${
    options.map(([v, text]) =>
      html`
        <option value="${v}" ${v === value
          ? html`
            selected
          `
          : ""}>${text}</option>
      `
    )
  }</select></div>`;
}

export function searchPage(c: ConsoleReq): Response {
  const p = c.ctx.url.searchParams;
  const q = p.get("q") ?? "";
  const provider = p.get("provider") ?? "";
  const architecture = p.get("architecture") ?? "";
  const sort = p.get("sort") ?? "downloads";
  const order = p.get("order") ?? "desc";
  const pageNo = p.get("page") ?? "1";
  const query = new URLSearchParams({ q, provider, architecture, sort, order, page: pageNo });
  let boxes: StoredDoc<BoxDoc>[] = [];
  let errors: string[] = [];
  try {
    boxes = searchBoxes(actor(c), {
      q,
      provider,
      architecture,
      sort,
      order,
      page: pageNo,
      limit: String(PAGE_SIZE),
    });
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err;
    errors = errorMessages(err);
  }
  const filters = html`<div><label for="provider">Provider</label>
    <input type="text" id="provider" name="provider" value="${provider}" placeholder="virtualbox"></div>
    ${
    select("architecture", "Architecture", architecture, [
      ["", "any"],
      ...ARCHITECTURES.map((a) => [a, a] as [string, string]),
    ])
  }
    ${
    select("sort", "Sort by", sort, [["downloads", "downloads"], ["created", "newest"], [
      "updated",
      "recently updated",
    ]])
  }
    ${select("order", "Order", order, [["desc", "descending"], ["asc", "ascending"]])}`;
  const n = Number(pageNo) || 1;
  const link = (to: number) => {
    const next = new URLSearchParams(query);
    next.set("page", String(to));
    return `/boxes/search?${next}`;
  };
  const pager = html`<nav class="pager" aria-label="Result pages">
    ${n > 1 ? html`<a href="${link(n - 1)}" rel="prev">Previous page</a>` : ""}
    <span>Page ${n}</span>
    ${boxes.length === PAGE_SIZE ? html`<a href="${link(n + 1)}" rel="next">Next page</a>` : ""}</nav>`;
  const body = html`<h1>Search boxes</h1>${searchForm(q, filters)}
    <h2>Results</h2>${boxList(c, boxes, "No box matches.")}${pager}`;
  return page(c, {
    title: q ? `Search: ${q}` : "Search boxes",
    body,
    errors,
    status: errors.length ? 422 : 200,
  });
}

export function namespacePage(c: ConsoleReq): Response {
  const username = c.ctx.params.user ?? "";
  const ns = namespace(actor(c), username);
  const { org, insider } = ns;
  const profileHtml = markdownHtml(ns.profile);
  const body = html`<h1>${ns.username}${
    org
      ? html`
        <span class="tag">organization</span>
      `
      : ""
  }</h1>
    ${profileHtml ? html`<div class="markdown">${trusted(profileHtml)}</div>` : ""}
    <div class="actions">
    ${
    insider
      ? html`<a class="button secondary" href="/ui/boxes/new?owner=${seg(ns.username)}">New box</a>`
      : ""
  }
    ${org && c.user ? html`<a href="/ui/orgs/${seg(org.name)}">Members and service principals</a>` : ""}
    </div>
    <h2>Boxes</h2>${boxList(c, ns.boxes, "No boxes to show.")}`;
  return page(c, { title: ns.username, body });
}
