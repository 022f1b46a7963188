// Reading the source registry: API v2 when it answers there (HashiCorp's, a wharf), else v1; every box,
// version and provider the token can see, normalized to one shape whatever the source spelled.

import { ApiFailure, type RegistryApi } from "./http.ts";

export interface SourceProvider {
  name: string;
  architecture: string;
  default_architecture: boolean;
  hosted: boolean;
  /** The external URL of a provider that only links to its file, else null. */
  url: string | null;
  checksum: string | null;
  checksum_type: string | null;
  download_url: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export interface SourceVersion {
  version: string;
  status: "unreleased" | "active" | "revoked";
  description: string | null;
  created_at: string | null;
  updated_at: string | null;
  providers: SourceProvider[];
}

export interface SourceBox {
  username: string;
  name: string;
  private: boolean;
  short_description: string | null;
  description: string | null;
  downloads: number;
  created_at: string | null;
  updated_at: string | null;
  versions: SourceVersion[];
}

type Json = Record<string, unknown>;

const seg = encodeURIComponent;
const str = (v: unknown): string | null => typeof v === "string" ? v : null;

/** Which API the source speaks: v2 when its search answers under /api/v2, else v1. */
export async function detectApi(api: RegistryApi): Promise<1 | 2> {
  try {
    if (await api.call("GET", "/api/v2/search?limit=1", undefined, { allow404: true })) return 2;
  } catch (err) {
    if (!(err instanceof ApiFailure) || (err.status !== 405 && err.status !== 400)) throw err;
  }
  await api.call("GET", "/api/v1/search?limit=1");
  return 1;
}

export class SourceReader {
  readonly api: RegistryApi;
  readonly version: 1 | 2;

  constructor(api: RegistryApi, version: 1 | 2) {
    this.api = api;
    this.version = version;
  }

  get #prefix(): string {
    return `/api/v${this.version}`;
  }

  /** Names of every box of `namespace` the token can see (private ones for members). */
  async boxNames(namespace: string): Promise<string[]> {
    const user = await this.api.call<Json>("GET", `${this.#prefix}/user/${seg(namespace)}`, undefined, {
      allow404: true,
    });
    if (!user) {
      throw new ApiFailure(404, `${this.api.label}: namespace ${namespace} not found (or not visible)`);
    }
    const boxes = Array.isArray(user.boxes) ? user.boxes as Json[] : [];
    return boxes.map((b) => str(b.name) ?? String(b.tag ?? "").split("/")[1] ?? "").filter(Boolean);
  }

  /** One box with every version and provider it shows the token, checksums included; undefined when absent. */
  async box(namespace: string, name: string): Promise<SourceBox | undefined> {
    const path = `${this.#prefix}/box/${seg(namespace)}/${seg(name)}`;
    const box = await this.api.call<Json>("GET", path, undefined, { allow404: true });
    if (!box) return undefined;
    const versions: SourceVersion[] = [];
    for (const raw of Array.isArray(box.versions) ? box.versions as Json[] : []) {
      versions.push(await this.#version(path, raw));
    }
    return {
      username: str(box.username) ?? namespace,
      name: str(box.name) ?? name,
      private: box.private === true,
      short_description: str(box.short_description),
      description: str(box.description_markdown) ?? str(box.description),
      downloads: typeof box.downloads === "number" ? box.downloads : 0,
      created_at: str(box.created_at),
      updated_at: str(box.updated_at),
      versions,
    };
  }

  async #version(boxPath: string, listed: Json): Promise<SourceVersion> {
    const number = str(listed.version) ?? str(listed.number) ?? "";
    const path = `${boxPath}/version/${seg(number)}`;
    let raw = listed;
    let providers = Array.isArray(raw.providers) ? raw.providers as Json[] : [];
    // HashiCorp's box answer leaves the architecture out of its providers; the version answer has it.
    if (this.version === 2 && providers.some((p) => typeof p.architecture !== "string")) {
      raw = await this.api.call<Json>("GET", path) ?? raw;
      providers = Array.isArray(raw.providers) ? raw.providers as Json[] : [];
    }
    const out: SourceProvider[] = [];
    for (const p of providers) out.push(await this.#provider(path, p));
    const status = str(raw.status);
    return {
      version: number,
      status: status === "active" || status === "revoked" ? status : "unreleased",
      description: str(raw.description_markdown) ?? str(raw.description),
      created_at: str(raw.created_at),
      updated_at: str(raw.updated_at),
      providers: out,
    };
  }

  async #provider(versionPath: string, listed: Json): Promise<SourceProvider> {
    const name = str(listed.name) ?? "";
    const architecture = str(listed.architecture);
    let raw = listed;
    // Checksums appear only in a single provider's answer.
    if (!("checksum" in raw)) {
      const path = this.version === 2 && architecture
        ? `${versionPath}/provider/${seg(name)}/${seg(architecture)}`
        : `${versionPath}/provider/${seg(name)}`;
      raw = { ...listed, ...await this.api.call<Json>("GET", path) };
    }
    const external = str(raw.original_url) ?? str(raw.url);
    return {
      name,
      architecture: str(raw.architecture) ?? "unknown",
      default_architecture: typeof raw.default_architecture === "boolean" ? raw.default_architecture : true,
      hosted: raw.hosted === true,
      url: raw.hosted === true ? null : external,
      checksum: str(raw.checksum)?.toLowerCase() ?? null,
      checksum_type: str(raw.checksum_type)?.toLowerCase() ?? null,
      download_url: str(raw.download_url),
      created_at: str(raw.created_at),
      updated_at: str(raw.updated_at),
    };
  }
}
