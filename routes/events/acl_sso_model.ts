// Stored shapes of ACL auth methods and binding rules (docs/events.md#sso-login), their wire renderings in
// Nomad's field order (the client secret redacted) and their events on the ACLAuthMethod/ACLBindingRule topics.

import type { EventInput } from "../../lib/store/mod.ts";
import { formatGoDuration } from "./duration.ts";

export const authMethodCollection = "cluster/acl_auth_methods";
export const bindingRuleCollection = "cluster/acl_binding_rules";
/** The key purpose that seals an auth method's OIDCClientSecret in its stored document (AAD: the name). */
export const clientSecretSealPurpose = "events.acl-auth-method-client-secret";

/** The configuration of an auth method but its client secret; durations in ns. */
export interface AuthMethodConfigFields {
  JWTValidationPubKeys: string[] | null;
  JWKSURL: string;
  OIDCDiscoveryURL: string;
  OIDCClientID: string;
  OIDCEnablePKCE: boolean;
  OIDCDisableUserInfo: boolean;
  OIDCScopes: string[] | null;
  BoundAudiences: string[] | null;
  BoundIssuer: string[] | null;
  AllowedRedirectURIs: string[] | null;
  DiscoveryCaPem: string[] | null;
  JWKSCACert: string;
  SigningAlgs: string[] | null;
  ExpirationLeewayNs: number;
  NotBeforeLeewayNs: number;
  ClockSkewLeewayNs: number;
  ClaimMappings: Record<string, string> | null;
  ListClaimMappings: Record<string, string> | null;
  VerboseLogging: boolean;
}

/** The configuration as stored: the client secret AES-GCM sealed ("" when none). */
export interface AuthMethodConfig extends AuthMethodConfigFields {
  OIDCClientSecretSealed: string;
}

export interface StoredAuthMethod {
  Name: string;
  Type: "OIDC" | "JWT";
  TokenLocality: "local" | "global";
  TokenNameFormat: string;
  MaxTokenTTLNs: number;
  Default: boolean;
  Config: AuthMethodConfig;
  Hash: string;
  CreateTime: string;
  ModifyTime: string;
  CreateIndex: number;
  ModifyIndex: number;
}

export type BindType = "role" | "policy" | "management";

export interface StoredBindingRule {
  ID: string;
  Description: string;
  AuthMethod: string;
  Selector: string;
  BindType: BindType;
  BindName: string;
  Hash: string;
  CreateTime: string;
  ModifyTime: string;
  CreateIndex: number;
  ModifyIndex: number;
}

/** A Go duration as Nomad marshals the leeways and MaxTokenTTL: "" for zero. */
function durationText(ns: number): string {
  return ns === 0 ? "" : formatGoDuration(ns);
}

function renderConfig(c: AuthMethodConfig): Record<string, unknown> {
  return {
    ExpirationLeeway: durationText(c.ExpirationLeewayNs),
    NotBeforeLeeway: durationText(c.NotBeforeLeewayNs),
    ClockSkewLeeway: durationText(c.ClockSkewLeewayNs),
    JWTValidationPubKeys: c.JWTValidationPubKeys,
    JWKSURL: c.JWKSURL,
    OIDCDiscoveryURL: c.OIDCDiscoveryURL,
    OIDCClientID: c.OIDCClientID,
    // Nomad's Sanitize: a set secret is never returned, only the word "redacted".
    OIDCClientSecret: c.OIDCClientSecretSealed ? "redacted" : "",
    OIDCClientAssertion: null,
    OIDCEnablePKCE: c.OIDCEnablePKCE,
    OIDCDisableUserInfo: c.OIDCDisableUserInfo,
    OIDCScopes: c.OIDCScopes,
    BoundAudiences: c.BoundAudiences,
    BoundIssuer: c.BoundIssuer,
    AllowedRedirectURIs: c.AllowedRedirectURIs,
    DiscoveryCaPem: c.DiscoveryCaPem,
    JWKSCACert: c.JWKSCACert,
    SigningAlgs: c.SigningAlgs,
    ClaimMappings: c.ClaimMappings,
    ListClaimMappings: c.ListClaimMappings,
    VerboseLogging: c.VerboseLogging,
  };
}

export function renderAuthMethod(m: StoredAuthMethod): Record<string, unknown> {
  return {
    MaxTokenTTL: durationText(m.MaxTokenTTLNs),
    Name: m.Name,
    Type: m.Type,
    TokenLocality: m.TokenLocality,
    TokenNameFormat: m.TokenNameFormat,
    Default: m.Default,
    Config: renderConfig(m.Config),
    Hash: m.Hash,
    CreateTime: m.CreateTime,
    ModifyTime: m.ModifyTime,
    CreateIndex: m.CreateIndex,
    ModifyIndex: m.ModifyIndex,
  };
}

export function renderAuthMethodStub(m: StoredAuthMethod): Record<string, unknown> {
  return {
    Name: m.Name,
    Type: m.Type,
    Default: m.Default,
    Hash: m.Hash,
    CreateIndex: m.CreateIndex,
    ModifyIndex: m.ModifyIndex,
  };
}

export function renderBindingRule(r: StoredBindingRule): Record<string, unknown> {
  return { ...r };
}

export function renderBindingRuleStub(r: StoredBindingRule): Record<string, unknown> {
  return {
    ID: r.ID,
    Description: r.Description,
    AuthMethod: r.AuthMethod,
    Hash: r.Hash,
    CreateIndex: r.CreateIndex,
    ModifyIndex: r.ModifyIndex,
  };
}

export function authMethodEvent(
  type: "ACLAuthMethodUpserted" | "ACLAuthMethodDeleted",
  m: StoredAuthMethod,
): EventInput {
  return { Topic: "ACLAuthMethod", Type: type, Key: m.Name, Payload: { AuthMethod: renderAuthMethod(m) } };
}

export function bindingRuleEvent(
  type: "ACLBindingRuleUpserted" | "ACLBindingRuleDeleted",
  r: StoredBindingRule,
): EventInput {
  return {
    Topic: "ACLBindingRule",
    Type: type,
    Key: r.ID,
    Payload: { ACLBindingRule: renderBindingRule(r) },
  };
}
