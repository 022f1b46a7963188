// Public pages: the home page (search, most downloaded, newest), search results with the API's rules
// (GET /api/v2/search, same parameters and errors) and a user's or organization's page.

import { ApiError } from "../../lib/errors.ts";
import { getNamespace } from "../registry/api/users.ts";
import { isInsider } from "../registry/core/caller.ts";
import { search } from "../registry/api/search.ts";
import { ARCHITECTURES } from "../registry/core/architectures.ts";
import { callRegistry, type ConsoleReq, errorMessages } from "./context.ts";
import { type Html, html, seg, trusted } from "./html.ts";
import { page } from "./layout.ts";

// deno-lint-ignore no-explicit-any
type BoxJson = any;

function providerTags(box: BoxJson): Html {
  const providers: BoxJson[] = box.current_version?.providers ?? [];
  const labels = [...new Set(providers.map((p) => `${p.name} · ${p.architecture}`))];
  return html`${
    labels.map((l) =>
      html`
        <span class="tag">${l}</span>
      `
    )
  }`;
}

export function boxList(boxes: BoxJson[], empty: string): Html {
  if (boxes.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<ul class="boxes">${
    boxes.map((b) =>
      html`
        <li>
          <h3><a href="/${seg(b.username)}/boxes/${seg(b.name)}">${b.tag}</a>${b.private
            ? html`
              <span class="tag">private</span>
            `
            : ""}</h3>
          <p>${b.short_description ?? ""}</p>
          <p class="muted">${b.current_version
            ? html`v${b.current_version.version}`
            : "no released version"} · ${b.downloads} downloads</p>
          <p>${providerTags(b)}</p>
        </li>
      `
    )
  }</ul>`;
}

function searchForm(q: string, extra: Html = html``): Html {
  return html`<form class="searchbar" method="get" action="/boxes/search" role="search">
  <div class="grow"><label for="q">Search boxes</label>
  <input type="search" id="q" name="q" value="${q}" placeholder="ubuntu, acme/devbox, …"></div>
  ${extra}
  <div><button type="submit">Search</button></div></form>`;
}

export async function homePage(c: ConsoleReq): Promise<Response> {
  const popular = await callRegistry(c, search, { search: "?sort=downloads&order=desc&limit=6" });
  const newest = await callRegistry(c, search, { search: "?sort=created&order=desc&limit=6" });
  const body = html`<h1>Find Vagrant boxes</h1>
  ${searchForm("")}
  <h2>Most downloaded</h2>${boxList(popular.boxes, "No box has been released yet.")}
  <h2>Newest</h2>${boxList(newest.boxes, "No box has been released yet.")}`;
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

export async function searchPage(c: ConsoleReq): Promise<Response> {
  const p = c.ctx.url.searchParams;
  const q = p.get("q") ?? "";
  const provider = p.get("provider") ?? "";
  const architecture = p.get("architecture") ?? "";
  const sort = p.get("sort") ?? "downloads";
  const order = p.get("order") ?? "desc";
  const pageNo = p.get("page") ?? "1";
  const query = new URLSearchParams({ q, provider, architecture, sort, order, page: pageNo });
  let boxes: BoxJson[] = [];
  let errors: string[] = [];
  try {
    boxes = (await callRegistry(c, search, { search: `?${query}&limit=${PAGE_SIZE}` })).boxes;
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
    <h2>Results</h2>${boxList(boxes, "No box matches.")}${pager}`;
  return page(c, {
    title: q ? `Search: ${q}` : "Search boxes",
    body,
    errors,
    status: errors.length ? 422 : 200,
  });
}

export async function namespacePage(c: ConsoleReq): Promise<Response> {
  const username = c.ctx.params.user ?? "";
  const ns = await callRegistry(c, getNamespace, { params: { username } });
  const org = c.reg.org(username)?.doc;
  const insider = isInsider(c.reg, c.caller, username.toLowerCase());
  const body = html`<h1>${ns.username}${
    org
      ? html`
        <span class="tag">organization</span>
      `
      : ""
  }</h1>
    ${ns.profile_html ? html`<div class="markdown">${trusted(ns.profile_html)}</div>` : ""}
    <div class="actions">
    ${
    insider
      ? html`<a class="button secondary" href="/ui/boxes/new?owner=${seg(ns.username)}">New box</a>`
      : ""
  }
    ${org && c.user ? html`<a href="/ui/orgs/${seg(org.name)}">Members and service principals</a>` : ""}
    </div>
    <h2>Boxes</h2>${boxList(ns.boxes, "No boxes to show.")}`;
  return page(c, { title: ns.username, body });
}
