// Stream events on topic `Box` (docs/registry.md#events): keys, filter keys and secret-free owner-view
// payloads, rendered as API v2 renders them (every architecture, with its keys).

import type { EventInput, StoredDoc } from "../../../lib/store/mod.ts";
import type { BoxDoc, ProviderDoc, VersionDoc } from "./model.ts";
import { boxPath, renderBox, renderProvider, renderVersion, type View } from "./render.ts";

function ownerView(view: View): View {
  return { ...view, insider: true, api: 2 };
}

export function boxEvent(
  type: "BoxCreated" | "BoxUpdated" | "BoxDeleted",
  view: View,
  box: StoredDoc<BoxDoc>,
  actor: string,
  extra: Record<string, unknown> = {},
): EventInput {
  const tag = boxPath(view.reg, box.doc);
  return {
    Topic: "Box",
    Type: type,
    Key: tag,
    Namespace: "",
    FilterKeys: null,
    Payload: { Box: renderBox(ownerView(view), box, false), tag, actor, ...extra },
  };
}

export function versionEvent(
  type: "VersionCreated" | "VersionUpdated" | "VersionReleased" | "VersionRevoked" | "VersionDeleted",
  view: View,
  box: BoxDoc,
  version: VersionDoc,
  actor: string,
): EventInput {
  const tag = boxPath(view.reg, box);
  return {
    Topic: "Box",
    Type: type,
    Key: `${tag}/${version.version}`,
    Namespace: "",
    FilterKeys: [tag],
    Payload: { Version: renderVersion(ownerView(view), box, version), tag, version: version.version, actor },
  };
}

export function providerEvent(
  type: "ProviderCreated" | "ProviderUpdated" | "ProviderDeleted" | "ProviderUploaded",
  view: View,
  box: BoxDoc,
  version: VersionDoc,
  provider: ProviderDoc,
  actor: string,
  extra: Record<string, unknown> = {},
): EventInput {
  const tag = boxPath(view.reg, box);
  return {
    Topic: "Box",
    Type: type,
    Key: `${tag}/${version.version}/${provider.name}/${provider.architecture}`,
    Namespace: "",
    FilterKeys: [tag, `${tag}/${version.version}`],
    Payload: {
      Provider: renderProvider(ownerView(view), box, version, provider),
      tag,
      version: version.version,
      actor,
      ...extra,
    },
  };
}
