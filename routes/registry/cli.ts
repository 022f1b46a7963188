// `wharf registry …`: the admin API from a shell (users, organizations, service principals, maintenance, tokens)
// against a running server, and `admin reset-password`, which works offline on a data directory no server holds.

import { DataDir } from "../../lib/store/mod.ts";
import { storageSettings } from "../../lib/store/storage_settings.ts";
import { type UserDoc, USERS } from "./model.ts";
import { registryHasher } from "./passwords.ts";
import { HashingQueue } from "../../lib/password_hashing.ts";

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of stdin (for --password-stdin). */
  readStdin(): Promise<string>;
  /** Asks for a password without echo; undefined when there is no terminal. */
  promptPassword(question: string): Promise<string | undefined>;
  env: Readonly<Record<string, string>>;
  /** Raw text to stderr (live progress), and whether stderr is a terminal; stderr() lines otherwise. */
  writeStderr?(text: string): void;
  stderrIsTerminal?: boolean;
}

export const registryUsage = `usage: wharf registry <command> [options]
  user list | show NAME | create NAME --email E [--mobile M] [--admin] | update NAME [--email E]
       [--mobile M|none] [--admin true|false] [--delinquent true|false] [--password] | delete NAME [--cascade]
  org list | show NAME | create NAME [--member USER:owner|member]... | update NAME [--delinquent true|false]
       | delete NAME [--cascade] | member ORG USER --role owner|member | remove-member ORG USER
  sp create ORG NAME | list ORG | delete ORG CLIENT_ID   (service principals: client credentials for CI)
  maintenance show | on | off
  token create --login LOGIN [--description D] [--code CODE] | list USER | revoke USER TOKEN_HASH
  admin reset-password --data-dir DIR
  import --from URL --namespace SRC[=DEST] | --box SRC/NAME[=DEST/NAME] ...   (see: registry import --help)
options: --server URL (WHARF_SERVER, default http://127.0.0.1:8080), --token T (WHARF_REGISTRY_TOKEN),
  --password-stdin (read the password from stdin; otherwise it is prompted for, never taken from argv)`;

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string[]>;
}

const booleanFlags = new Set(["admin", "cascade", "password-stdin", "password", "help"]);

function parse(args: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) {
      positional.push(arg);
      continue;
    }
    const name = m[1]!;
    let value = m[2];
    if (value === undefined && !booleanFlags.has(name)) {
      value = args[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
    }
    flags.set(name, [...(flags.get(name) ?? []), value ?? "true"]);
  }
  return { positional, flags };
}

function flag(p: Parsed, name: string): string | undefined {
  return p.flags.get(name)?.at(-1);
}

function boolFlag(p: Parsed, name: string): boolean | undefined {
  const v = flag(p, name);
  if (v === undefined) return undefined;
  if (v === "true") return true;
  if (v === "false") return false;
  throw new UsageError(`--${name} takes true or false`);
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

async function readPassword(p: Parsed, io: CliIo, question = "Password: "): Promise<string> {
  if (p.flags.has("password-stdin")) return (await io.readStdin()).replace(/\r?\n$/, "");
  const typed = await io.promptPassword(question);
  if (typed === undefined) throw new UsageError("no terminal to ask for the password: use --password-stdin");
  return typed;
}

/** Runs one `wharf registry …` command; returns the exit code. */
export async function runRegistryCli(args: readonly string[], io: CliIo): Promise<number> {
  if (args[0] === "import") {
    // A client of two registries with its own options: cli/import (not a route, so not under routes/).
    const { runImport } = await import("../../cli/import/mod.ts");
    return await runImport(args.slice(1), {
      stdout: io.stdout,
      writeStderr: io.writeStderr ?? ((t) => io.stderr(t.replace(/\n$/, ""))),
      stderrIsTerminal: io.stderrIsTerminal ?? false,
      env: io.env,
    });
  }
  try {
    const p = parse(args);
    if (p.flags.has("help") || p.positional.length === 0) {
      io.stdout(registryUsage);
      return p.positional.length === 0 && !p.flags.has("help") ? 2 : 0;
    }
    if (p.positional[0] === "admin" && p.positional[1] === "reset-password") {
      return await resetPassword(p, io);
    }
    const { method, path, body } = await request(p, io);
    const server = (flag(p, "server") ?? io.env.WHARF_SERVER ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
    const token = flag(p, "token") ?? io.env.WHARF_REGISTRY_TOKEN;
    const headers: Record<string, string> = { Accept: "application/json" };
    if (token && path !== "/api/v1/authenticate") headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(server + path, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    if (!response.ok) {
      let errors: string[] = [`HTTP ${response.status}`];
      try {
        errors = JSON.parse(text).errors ?? errors;
      } catch {
        // not the registry's error shape: keep the status
      }
      io.stderr(`wharf registry: ${errors.join("; ")}`);
      return 1;
    }
    io.stdout(text ? JSON.stringify(JSON.parse(text), null, 2) : "{}");
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`wharf registry: ${err.message}\n${registryUsage}`);
      return 2;
    }
    io.stderr(`wharf registry: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

interface ApiRequest {
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

async function request(p: Parsed, io: CliIo): Promise<ApiRequest> {
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

/** Sets the bootstrap admin's password directly in the data directory (the server must be stopped). */
async function resetPassword(p: Parsed, io: CliIo): Promise<number> {
  const dir = need(flag(p, "data-dir") ?? io.env.WHARF_DATA_DIR, "--data-dir");
  const password = await readPassword(p, io, "New password for admin: ");
  if (password.length < 8) throw new UsageError("the password needs at least 8 characters");
  const passwordHash = await registryHasher(new HashingQueue()).hash(password);
  // On a cluster (WHARF_DATABASE_URL) the admin lives in the shared database, not in the node's directory.
  const data = await DataDir.open(dir, storageSettings(io.env));
  try {
    const admin = data.store.get<UserDoc>(USERS, "admin");
    if (!admin) throw new Error(`no registry user "admin" in ${dir}`);
    const doc: UserDoc = { ...admin.doc, password_hash: passwordHash, updated_at: new Date().toISOString() };
    await data.store.put(USERS, "admin", doc, { ifVersion: admin.version });
  } finally {
    await data.close();
  }
  io.stdout(`password of "admin" reset in ${dir}`);
  return 0;
}

/** The real terminal and process streams. */
export function processIo(): CliIo {
  const encoder = new TextEncoder();
  return {
    stdout: (t) => console.log(t),
    stderr: (t) => console.error(t),
    readStdin: async () => new TextDecoder().decode(await new Response(Deno.stdin.readable).arrayBuffer()),
    promptPassword: async (question) => {
      if (!Deno.stdin.isTerminal()) return undefined;
      Deno.stdout.writeSync(encoder.encode(question));
      Deno.stdin.setRaw(true);
      const typed: number[] = [];
      const buf = new Uint8Array(1);
      try {
        for (;;) {
          const n = await Deno.stdin.read(buf);
          if (n === null || buf[0] === 13 || buf[0] === 10) break;
          if (buf[0] === 3) throw new Error("interrupted");
          if (buf[0] === 127) typed.pop();
          else typed.push(buf[0]!);
        }
      } finally {
        Deno.stdin.setRaw(false);
        Deno.stdout.writeSync(encoder.encode("\n"));
      }
      return new TextDecoder().decode(new Uint8Array(typed));
    },
    env: Deno.env.toObject(),
    writeStderr: (t) => {
      const bytes = encoder.encode(t);
      for (let at = 0; at < bytes.length;) at += Deno.stderr.writeSync(bytes.subarray(at));
    },
    stderrIsTerminal: Deno.stderr.isTerminal(),
  };
}
