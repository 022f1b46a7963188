// Each `wharf registry` command as the admin API request it makes (docs/registry.md, "Administration").

import { boolFlag, flag, need, type Parsed, readPassword, UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";

export interface ApiRequest {
  method: string;
  path: string;
  body?: unknown;
}

const seg = encodeURIComponent;

/** Deletes a user or an organization, and its boxes too with --cascade. */
function deleteNamespace(collection: string, name: string, p: Parsed): ApiRequest {
  return {
    method: "DELETE",
    path: `${collection}/${seg(name)}${p.flags.has("cascade") ? "?cascade=true" : ""}`,
  };
}

export async function apiRequest(p: Parsed, io: CliIo): Promise<ApiRequest> {
  const [group, action, a, b] = p.positional;
  const users = "/api/v1/admin/users";
  const orgs = "/api/v1/admin/organizations";
  switch (`${group} ${action}`) {
    case "user list":
      return { method: "GET", path: users };
    case "user show":
      return { method: "GET", path: `${users}/${seg(need(a, "NAME"))}` };
    case "user create": {
      const user: Record<string, unknown> = {
        username: need(a, "NAME"),
        email: need(flag(p, "email"), "--email"),
        password: await readPassword(p, io),
      };
      if (flag(p, "mobile")) user.mobile = flag(p, "mobile");
      if (p.flags.has("admin")) user.admin = true;
      return { method: "POST", path: users, body: { user } };
    }
    case "user update": {
      const user: Record<string, unknown> = {};
      if (flag(p, "email")) user.email = flag(p, "email");
      if (flag(p, "mobile")) user.mobile = flag(p, "mobile") === "none" ? null : flag(p, "mobile");
      if (boolFlag(p, "admin") !== undefined) user.admin = boolFlag(p, "admin");
      if (boolFlag(p, "delinquent") !== undefined) user.delinquent = boolFlag(p, "delinquent");
      if (p.flags.has("password") || p.flags.has("password-stdin")) user.password = await readPassword(p, io);
      return { method: "PUT", path: `${users}/${seg(need(a, "NAME"))}`, body: { user } };
    }
    case "user delete":
      return deleteNamespace(users, need(a, "NAME"), p);
    case "org list":
      return { method: "GET", path: orgs };
    case "org show":
      return { method: "GET", path: `${orgs}/${seg(need(a, "NAME"))}` };
    case "org create": {
      const members = (p.flags.get("member") ?? []).map((m) => {
        const [username, role = "member"] = m.split(":");
        return { username, role };
      });
      return { method: "POST", path: orgs, body: { organization: { name: need(a, "NAME"), members } } };
    }
    case "org update": {
      const organization: Record<string, unknown> = {};
      if (boolFlag(p, "delinquent") !== undefined) organization.delinquent = boolFlag(p, "delinquent");
      if (flag(p, "profile") !== undefined) organization.profile = flag(p, "profile");
      return { method: "PUT", path: `${orgs}/${seg(need(a, "NAME"))}`, body: { organization } };
    }
    case "org delete":
      return deleteNamespace(orgs, need(a, "NAME"), p);
    case "org member":
      return {
        method: "PUT",
        path: `${orgs}/${seg(need(a, "ORG"))}/members/${seg(need(b, "USER"))}`,
        body: { member: { role: need(flag(p, "role"), "--role") } },
      };
    case "org remove-member":
      return { method: "DELETE", path: `${orgs}/${seg(need(a, "ORG"))}/members/${seg(need(b, "USER"))}` };
    case "sp create":
      return {
        method: "POST",
        path: `${orgs}/${seg(need(a, "ORG"))}/service-principals`,
        body: { service_principal: { name: need(b, "NAME") } },
      };
    case "sp list":
      return { method: "GET", path: `${orgs}/${seg(need(a, "ORG"))}/service-principals` };
    case "sp delete":
      return {
        method: "DELETE",
        path: `${orgs}/${seg(need(a, "ORG"))}/service-principals/${seg(need(b, "CLIENT_ID"))}`,
      };
    case "maintenance show":
      return { method: "GET", path: "/api/v1/admin/maintenance" };
    case "maintenance on":
    case "maintenance off":
      return { method: "PUT", path: "/api/v1/admin/maintenance", body: { enabled: action === "on" } };
    case "token create":
      return {
        method: "POST",
        path: "/api/v1/authenticate",
        body: {
          user: { login: need(flag(p, "login"), "--login"), password: await readPassword(p, io) },
          token: { description: flag(p, "description") ?? "wharf registry token create" },
          ...(flag(p, "code") ? { two_factor: { code: flag(p, "code") } } : {}),
        },
      };
    case "token list":
      return { method: "GET", path: `${users}/${seg(need(a, "USER"))}/tokens` };
    case "token revoke":
      return {
        method: "DELETE",
        path: `${users}/${seg(need(a, "USER"))}/tokens/${seg(need(b, "TOKEN_HASH"))}`,
      };
    default:
      throw new UsageError(`unknown command: ${p.positional.join(" ")}`);
  }
}
