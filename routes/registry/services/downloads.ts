// What `vagrant box add` reads, for a caller (docs/registry.md#how-vagrant-23-and-24-see-the-same-box): a box's
// metadata document (API 1: each name's default architecture; 2: every architecture) as its JSON text, cached
// per stored document, and the provider a download URL names.

import type { StoredDoc } from "../../../lib/store/mod.ts";
import { notFound } from "../core/errors.ts";
import { type BoxDoc, type ProviderDoc, providerIsValid, type VersionDoc } from "../core/model.ts";
import { cachedJson, downloadUrl, markdownHtml, sortedVersions, type View } from "../core/render.ts";
import type { Actor } from "../core/registry.ts";
import { defaultProvider, providerIn } from "../core/architectures.ts";
import { isValidBoxName, namespacePattern } from "../core/rules.ts";
import { visibleBox } from "./boxes.ts";

function checkNames(username: string, name: string): void {
  if (!namespacePattern.test(username) || !isValidBoxName(name)) throw notFound();
}

/** A box's metadata document as JSON text, built for one origin and one spelling of the box's name. */
export interface MetadataText {
  origin: string;
  username: string;
  name: string;
  text: string;
  /** The box is private (its answers must not be stored by caches). */
  private: boolean;
}

/**
 * Per stored document (immutable: a write stores a new object, so a write is seen by the next read). Only the
 * last spelling of the name is kept: letter-case variants replace each other here and evict nothing else.
 */
const metadataTexts = { 1: new WeakMap<BoxDoc, MetadataText>(), 2: new WeakMap<BoxDoc, MetadataText>() };

/** The metadata of the box `username/name` the caller may see (404 otherwise), in the caller's API version. */
export function boxMetadata(actor: Actor, username: string, name: string): MetadataText {
  const { box } = visibleBox(actor, username, name);
  const doc = box.doc;
  const texts = metadataTexts[actor.api];
  let last = texts.get(doc);
  // A repeated request (same spelling, same origin) is answered with the text already built for it, its names
  // already checked.
  if (
    last === undefined || last.name !== name || last.username !== username || last.origin !== actor.origin
  ) {
    checkNames(username, name);
    // `name` echoes the request's spelling; the rest is shared by every spelling.
    const text = `{"name":${JSON.stringify(`${username}/${name}`)},${metadataRest(actor, doc)}`;
    texts.set(doc, last = { origin: actor.origin, username, name, text, private: doc.private });
  }
  return last;
}

/**
 * The providers a metadata document lists: v2 every valid one, one entry per (name, architecture); the root URL
 * one per name, its default architecture (when valid), as v1 answers show it.
 */
function listedProviders(api: 1 | 2, v: VersionDoc): ProviderDoc[] {
  if (api === 2) return v.providers.filter(providerIsValid);
  return v.providers.filter((p) => p.default_architecture && providerIsValid(p));
}

function metadataProvider(view: View, doc: BoxDoc, v: VersionDoc, p: ProviderDoc) {
  const checksum = p.checksum && p.checksum_type
    ? { checksum: p.checksum, checksum_type: p.checksum_type }
    : p.blob
    ? { checksum: p.blob.sha256, checksum_type: "sha256" }
    : { checksum: null, checksum_type: null };
  return {
    name: p.name,
    url: downloadUrl(view, doc, v, p),
    ...checksum,
    // Also on the root URL's entries: Vagrant 2.4 reading it still refuses a box built for another architecture.
    architecture: p.architecture,
    default_architecture: p.default_architecture,
  };
}

/** The metadata after its `name` member (without the opening brace), cached per document version, API and origin. */
function metadataRest(actor: Actor, doc: BoxDoc): string {
  return cachedJson(doc, `metadata-rest|${actor.api}|${actor.origin}`, () => {
    const view = { reg: actor.reg, origin: actor.origin, insider: false, api: actor.api };
    const versions = sortedVersions(doc).filter((v) => v.status === "active").map((v) => {
      const providers = listedProviders(actor.api, v).map((p) => metadataProvider(view, doc, v, p));
      return {
        version: v.version,
        status: v.status,
        description_markdown: v.description,
        description_html: markdownHtml(v.description),
        providers,
      };
    });
    const text = JSON.stringify({
      description: doc.description ?? doc.short_description,
      short_description: doc.short_description,
      versions,
    });
    return text.slice(1);
  });
}

/** What a download URL names: the box, its version and provider. */
export interface DownloadTarget {
  username: string;
  name: string;
  version: string;
  provider: string;
  /** Absent on the v1 URL (…/:provider.box), which serves the name's default architecture. */
  architecture: string | undefined;
}

/** The box and the provider file a download URL names, when the caller may see them (404 otherwise). */
export function downloadable(
  actor: Actor,
  target: DownloadTarget,
): { box: StoredDoc<BoxDoc>; provider: ProviderDoc } {
  checkNames(target.username, target.name);
  const { box, insider } = visibleBox(actor, target.username, target.name);
  const version = box.doc.versions.find((v) => v.version === target.version);
  if (!version || (!insider && version.status !== "active")) throw notFound();
  const provider = target.architecture === undefined
    ? defaultProvider(version, target.provider)
    : providerIn(version, target.provider, target.architecture);
  if (!provider || !providerIsValid(provider)) throw notFound();
  return { box, provider };
}
