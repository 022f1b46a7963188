// The registry: its documents and indexes (state.ts) with the collaborators every service needs, built here at
// construction: two-factor codes and secrets, and service principals.

import type { AppContext } from "../../../lib/app.ts";
import type { IdentityProvider } from "../../../lib/identity.ts";
import type { Counters } from "../../../lib/store/mod.ts";
import type { Acting } from "./caller.ts";
import { Principals } from "./principals.ts";
import type { ApiVersion } from "./render.ts";
import type { RegistrySettings } from "./settings.ts";
import type { SmsSender } from "./sms.ts";
import { RegistryState } from "./state.ts";
import { TwoFactor } from "./twofactor.ts";

/** What the registry is built from beside its settings: the usage counters and the SMS sender. */
export interface RegistryParts {
  downloads: Counters;
  tokenUse: Counters;
  /** Service principals' last use. */
  principalUse: Counters;
  sms: SmsSender;
  /** The auth methods, when they are served beside the registry: sign-in methods and linked people. */
  identity?: IdentityProvider;
}

export class Registry extends RegistryState {
  readonly twoFactor: TwoFactor;
  /** Service principals' tokens and last use (docs/registry.md#service-principals-for-ci). */
  readonly principals: Principals;
  constructor(ctx: AppContext, settings: RegistrySettings, parts: RegistryParts) {
    super(ctx, settings, parts);
    this.twoFactor = new TwoFactor(this, settings, parts.sms, ctx.data.keys);
    this.principals = new Principals(this, parts.principalUse);
    this.identity = parts.identity;
  }

  override close(): void {
    this.principals.close();
    super.close();
  }
}

/** The caller of a registry service: an API request is one, and so is a web console page. */
export interface Actor extends Acting {
  reg: Registry;
  /** scheme://host[:port] the caller reached the registry at: the absolute URLs of records and events. */
  origin: string;
  /**
   * The API the caller's answers take their URLs from
   * (docs/registry.md#how-vagrant-23-and-24-see-the-same-box).
   */
  api: ApiVersion;
}
