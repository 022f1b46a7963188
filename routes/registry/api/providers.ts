// Providers: GET/PUT/DELETE …/provider/:provider (v2: …/:provider/:architecture) and POST
// …/providers, over services/providers.ts.

import { json } from "../../../lib/http.ts";
import type { ProviderDoc, VersionDoc } from "../core/model.ts";
import { renderProvider } from "../core/render.ts";
import { ownerView } from "../services/boxes.ts";
import * as providers from "../services/providers.ts";
import type { ProviderPath, ProviderRecord } from "../services/providers.ts";
import type { Req } from "./auth.ts";
import { readPayload } from "./body.ts";
import { versionPath, visibleVersion } from "./versions.ts";

/** The provider the path names. */
export function providerPath(req: Req): ProviderPath {
  const p = req.ctx.params;
  return {
    owner: p.username ?? "",
    box: p.name ?? "",
    version: p.version ?? "",
    provider: p.provider ?? "",
    architecture: p.architecture ?? "",
  };
}

/** The provider a path names: v1 `…/provider/:provider` its default architecture, v2 `…/:provider/:architecture`. */
export function pathProvider(req: Req, version: VersionDoc): ProviderDoc {
  return providers.pathProvider(req, providerPath(req), version);
}

function answer(req: Req, r: ProviderRecord): Response {
  return json(renderProvider(ownerView(req), r.box, r.version, r.provider));
}

export function getProvider(req: Req): Response {
  const { box, version, insider } = visibleVersion(req);
  const provider = pathProvider(req, version);
  return json(
    renderProvider(
      { reg: req.reg, origin: req.origin, insider, api: req.api },
      box.doc,
      version,
      provider,
      true,
    ),
  );
}

export async function createProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  return answer(req, await providers.createProvider(req, versionPath(req), body));
}

export async function updateProvider(req: Req): Promise<Response> {
  const body = await readPayload(req, "provider");
  return answer(req, await providers.updateProvider(req, providerPath(req), body));
}

export async function deleteProvider(req: Req): Promise<Response> {
  return answer(req, await providers.deleteProvider(req, providerPath(req)));
}
