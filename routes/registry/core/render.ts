// JSON renderings of boxes, versions and providers (their Markdown through markdown.ts), and the event payloads.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { type BoxDoc, type ProviderDoc, providerIsValid, type VersionDoc } from "./model.ts";
import { compareVersions } from "./rules.ts";
import type { RegistryState } from "./state.ts";
import { v1Providers } from "./architectures.ts";
import { markdownHtml } from "./markdown.ts";

export { markdownHtml };

/**
 * The API a request is served under: 1 for /api/v1 and the root routes, 2 for /api/v2
 * (docs/registry.md#how-vagrant-23-and-24-see-the-same-box).
 */
export type ApiVersion = 1 | 2;

/**
 * How a box is being looked at: `insider` sees non-active versions; `origin` prefixes emitted URLs; `api` 2 shows
 * every architecture with its keys and /api/v2 URLs, 1 (or absent) only each name's default, as v1 did.
 */
export interface View {
  reg: RegistryState;
  origin: string;
  insider: boolean;
  api?: ApiVersion;
}

export function boxPath(reg: RegistryState, box: BoxDoc): string {
  return `${reg.namespaceName(box.owner) ?? box.owner}/${box.name}`;
}

/** Where a provider's file is downloaded: v1's `…/:provider.box` (the default architecture) or v2's per architecture. */
export function downloadUrl(view: View, box: BoxDoc, v: VersionDoc, p: ProviderDoc): string {
  const owner = ownerName(view, box);
  const base = `${view.origin}/${owner}/boxes/${box.name}/versions/${v.version}/providers/${p.name}`;
  return view.api === 2 ? `${base}/${p.architecture}/vagrant.box` : `${base}.box`;
}

export function renderProvider(view: View, box: BoxDoc, v: VersionDoc, p: ProviderDoc, withChecksum = false) {
  const out: Record<string, unknown> = {
    name: p.name,
    hosted: p.blob !== null,
    hosted_token: null,
    original_url: p.url,
    url: p.url,
    download_url: downloadUrl(view, box, v, p),
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
  if (withChecksum) {
    out.checksum = p.checksum;
    out.checksum_type = p.checksum_type;
  }
  if (view.api === 2) {
    out.architecture = p.architecture;
    out.default_architecture = p.default_architecture;
  }
  return out;
}

function ownerName(view: View, box: BoxDoc): string {
  return view.reg.namespaceName(box.owner) ?? box.owner;
}

export function renderVersion(view: View, box: BoxDoc, v: VersionDoc) {
  const base = `${view.origin}/api/v${view.api ?? 1}/box/${boxPath(view.reg, box)}/version/${v.version}`;
  const providers = view.api === 2 ? v.providers : v1Providers(v);
  return {
    version: v.version,
    number: v.version,
    status: v.status,
    description: v.description,
    description_markdown: v.description,
    description_html: markdownHtml(v.description),
    created_at: v.created_at,
    updated_at: v.updated_at,
    release_url: `${base}/release`,
    revoke_url: `${base}/revoke`,
    providers: providers.map((p) => renderProvider(view, box, v, p)),
  };
}

/** Versions, highest first. */
export function sortedVersions(box: BoxDoc): VersionDoc[] {
  let sorted = sortedCache.get(box);
  if (!sorted) {
    sorted = [...box.versions].sort((a, b) => compareVersions(b.version, a.version));
    sortedCache.set(box, sorted);
  }
  return sorted;
}

const sortedCache = new WeakMap<BoxDoc, VersionDoc[]>();

/** Stored box documents are immutable (each write stores a new object), so derived values are cached. */
const currentCache = new WeakMap<BoxDoc, VersionDoc | null>();

export function currentVersion(box: BoxDoc): VersionDoc | undefined {
  let current = currentCache.get(box);
  if (current === undefined) {
    current = sortedVersions(box).find((v) => v.status === "active") ?? null;
    currentCache.set(box, current);
  }
  return current ?? undefined;
}

/** Exactly the 13 Box keys (12 without `versions`). */
export function renderBox(view: View, stored: StoredDoc<BoxDoc>, withVersions: boolean) {
  const box = stored.doc;
  const current = currentVersion(box);
  const out: Record<string, unknown> = {
    tag: boxPath(view.reg, box),
    username: ownerName(view, box),
    name: box.name,
    private: box.private,
    downloads: view.reg.boxDownloads(stored),
    short_description: box.short_description,
    description: box.description,
    description_markdown: box.description,
    description_html: markdownHtml(box.description),
    created_at: box.created_at,
    updated_at: box.updated_at,
    current_version: current ? renderVersion(view, box, current) : null,
  };
  if (withVersions) {
    out.versions = sortedVersions(box)
      .filter((v) => view.insider || v.status === "active")
      .map((v) => renderVersion(view, box, v));
  }
  return out;
}

export function hasValidProvider(v: VersionDoc): boolean {
  return v.providers.some(providerIsValid);
}

/** Serialized renderings per stored document (documents are immutable: a write stores a new object). */
const CACHED_PER_DOC = 16;
const jsonCache = new WeakMap<object, Map<string, unknown>>();

function cached<T>(doc: object, key: string, build: () => T): T {
  let byKey = jsonCache.get(doc);
  if (!byKey) jsonCache.set(doc, byKey = new Map());
  let value = byKey.get(key) as T | undefined;
  if (value === undefined) {
    value = build();
    if (byKey.size >= CACHED_PER_DOC) byKey.delete(byKey.keys().next().value!);
    byKey.set(key, value);
  }
  return value;
}

export function cachedJson(doc: object, key: string, build: () => string): string {
  return cached(doc, key, build);
}

/**
 * The cache keys of the last origin read, by view: while requests name the same host (the usual case) a read
 * finds its key rather than building one, which would be hashed again on every request. One origin at a time:
 * a client may name any host.
 */
let keysOfOrigin = { origin: "", keys: new Map<string, string>() };

function keyWithOrigin(variant: string, origin: string): string {
  if (keysOfOrigin.origin !== origin) keysOfOrigin = { origin, keys: new Map() };
  let key = keysOfOrigin.keys.get(variant);
  if (key === undefined) keysOfOrigin.keys.set(variant, key = variant + origin);
  return key;
}

const DOWNLOADS_MARK = '"downloads":-1,';

/** A box's JSON text as last sent, and where in it the download count sits. */
interface CountedText {
  text: string;
  /** Offset of the count's first digit. */
  at: number;
  /** Length of the count as written in `text` (2 at first: the placeholder "-1"). */
  countLength: number;
  downloads: number;
}

/**
 * Box JSON (with or without versions) as one string, cached per document version, origin and view; a repeated
 * read returns the same string. When the box's download count moves, the count is replaced in place of the old
 * one (one copy of the text is kept, not a second one split around the count). A string body costs
 * Deno.serve less than a Uint8Array, which the Response constructor copies (measured with wrk).
 */
export function boxJson(view: View, stored: StoredDoc<BoxDoc>, withVersions = true): string {
  const variant =
    (withVersions ? (view.insider ? "box+v+i|" : "box+v|") : (view.insider ? "box+i|" : "box|")) +
    (view.api === 2 ? "2|" : "");
  const slot = cached(stored.doc, keyWithOrigin(variant, view.origin), (): CountedText => {
    const rendered = renderBox(view, stored, withVersions);
    rendered.downloads = -1;
    const text = JSON.stringify(rendered);
    const at = text.indexOf(DOWNLOADS_MARK) + DOWNLOADS_MARK.length - 3;
    return { text, at, countLength: 2, downloads: -1 };
  });
  const downloads = view.reg.boxDownloads(stored);
  if (slot.downloads !== downloads) {
    const count = String(downloads);
    slot.text = slot.text.slice(0, slot.at) + count + slot.text.slice(slot.at + slot.countLength);
    slot.countLength = count.length;
    slot.downloads = downloads;
  }
  return slot.text;
}
