// `wharf registry import` options: flags and environment read into one typed value (secrets never echoed).

export const importUsage =
  `usage: wharf registry import --from URL (--namespace SRC[=DEST] | --box SRC/NAME[=DEST/NAME])...
  [--source-token T] [--dry-run] [--parallel N] [--copy-external] [--json] [--server URL] [--token T]
Copies every box of a namespace (or the boxes named) from a Vagrant registry (HashiCorp's, or another wharf;
API v2 when it has it, else v1) into a running wharf. Run it again to copy only what is missing or different.
  --from URL          the source registry, e.g. https://vagrantcloud.com
  --source-token T    the source's token (else VAGRANT_CLOUD_TOKEN, else HCP_CLIENT_ID + HCP_CLIENT_SECRET
                      [+ HCP_AUTH_URL, HCP_TOKEN_PATH] as the vagrant_cloud gem does; else anonymous)
  --namespace S[=D]   every box of S the source token can see, into D (default S); repeatable
  --box S/N[=D/M]     one box; repeatable
  --dry-run           report what would be copied (with sizes), change nothing
  --parallel N        files copied at once (default 4)
  --copy-external     also copy files the source only links to (default: keep the external URL)
  --json              print a machine-readable report on stdout (progress goes to stderr)
  --server, --token   the target wharf (WHARF_SERVER, WHARF_REGISTRY_TOKEN): an admin, or an owner of every
                      target namespace (then download counts and creation times are not kept)`;

export class ImportUsageError extends Error {}

export interface BoxSelection {
  /** Source namespace and box name (undefined name: every box of the namespace). */
  source: { namespace: string; name?: string };
  target: { namespace: string; name?: string };
}

export type SourceAuth =
  | { kind: "none" }
  | { kind: "token"; token: string }
  | { kind: "client"; clientId: string; clientSecret: string; tokenUrl: string };

export interface ImportOptions {
  from: string;
  sourceAuth: SourceAuth;
  selections: BoxSelection[];
  server: string;
  token: string | undefined;
  dryRun: boolean;
  parallel: number;
  copyExternal: boolean;
  json: boolean;
}

const booleans = new Set(["dry-run", "copy-external", "json", "help"]);
const valued = new Set(["from", "source-token", "namespace", "box", "parallel", "server", "token"]);
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function splitMapping(raw: string, flag: string): [string, string | undefined] {
  const at = raw.indexOf("=");
  if (at < 0) return [raw, undefined];
  const dest = raw.slice(at + 1);
  if (!dest) throw new ImportUsageError(`--${flag} ${raw}: nothing after '='`);
  return [raw.slice(0, at), dest];
}

function parseSelection(flag: "namespace" | "box", raw: string): BoxSelection {
  const [src, dest] = splitMapping(raw, flag);
  if (flag === "namespace") {
    for (const n of [src, dest ?? src]) {
      if (!NAME.test(n)) throw new ImportUsageError(`--namespace: '${n}' is not a namespace name`);
    }
    return { source: { namespace: src }, target: { namespace: dest ?? src } };
  }
  const parts = (s: string) => {
    const m = /^([^/]+)\/([^/]+)$/.exec(s);
    if (!m || !NAME.test(m[1]!) || !NAME.test(m[2]!)) {
      throw new ImportUsageError(`--box: '${s}' is not NAMESPACE/NAME`);
    }
    return { namespace: m[1]!, name: m[2]! };
  };
  return { source: parts(src), target: parts(dest ?? src) };
}

/** Reads argv (after `import`) and the environment; `help` true when usage was asked for. */
export function parseImportOptions(
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): ImportOptions | "help" {
  const flags = new Map<string, string[]>();
  for (let i = 0; i < args.length; i++) {
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(args[i]!);
    if (!m) {
      throw new ImportUsageError(`unexpected argument: ${args[i]!.startsWith("-") ? args[i] : "(value)"}`);
    }
    const name = m[1]!;
    let value = m[2];
    if (!booleans.has(name) && !valued.has(name)) throw new ImportUsageError(`unknown option --${name}`);
    if (value === undefined && valued.has(name)) {
      value = args[++i];
      if (value === undefined) throw new ImportUsageError(`--${name} needs a value`);
    }
    flags.set(name, [...(flags.get(name) ?? []), value ?? "true"]);
  }
  if (flags.has("help")) return "help";
  const one = (name: string) => flags.get(name)?.at(-1);
  const from = one("from");
  if (!from) throw new ImportUsageError("missing --from URL (the source registry)");
  let fromUrl: URL;
  try {
    fromUrl = new URL(from);
  } catch {
    throw new ImportUsageError(`--from: '${from}' is not a URL`);
  }
  if (fromUrl.protocol !== "http:" && fromUrl.protocol !== "https:") {
    throw new ImportUsageError("--from must be an http or https URL");
  }
  const selections = [
    ...(flags.get("namespace") ?? []).map((n) => parseSelection("namespace", n)),
    ...(flags.get("box") ?? []).map((b) => parseSelection("box", b)),
  ];
  if (selections.length === 0) {
    throw new ImportUsageError("name what to import: --namespace SRC or --box SRC/NAME");
  }
  const parallelRaw = one("parallel") ?? "4";
  const parallel = Number(parallelRaw);
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) {
    throw new ImportUsageError("--parallel takes a whole number from 1 to 64");
  }
  return {
    from: `${fromUrl.origin}${fromUrl.pathname.replace(/\/+$/, "").replace(/\/api\/v[12]$/, "")}`,
    sourceAuth: sourceAuth(one("source-token"), env),
    selections,
    server: (one("server") ?? env.WHARF_SERVER ?? "http://127.0.0.1:8080").replace(/\/+$/, ""),
    token: one("token") ?? env.WHARF_REGISTRY_TOKEN,
    dryRun: flags.has("dry-run"),
    parallel,
    copyExternal: flags.has("copy-external"),
    json: flags.has("json"),
  };
}

/** The source's credentials in the vagrant_cloud gem's order: a token, else HCP client credentials. */
function sourceAuth(flagToken: string | undefined, env: Readonly<Record<string, string>>): SourceAuth {
  const token = flagToken ?? env.VAGRANT_CLOUD_TOKEN;
  if (token) return { kind: "token", token };
  if (env.HCP_CLIENT_ID || env.HCP_CLIENT_SECRET) {
    if (!env.HCP_CLIENT_ID || !env.HCP_CLIENT_SECRET) {
      throw new ImportUsageError("HCP_CLIENT_ID and HCP_CLIENT_SECRET must be set together");
    }
    const base = (env.HCP_AUTH_URL || "https://auth.idp.hashicorp.com").replace(/\/+$/, "");
    return {
      kind: "client",
      clientId: env.HCP_CLIENT_ID,
      clientSecret: env.HCP_CLIENT_SECRET,
      tokenUrl: base + (env.HCP_TOKEN_PATH || "/oauth2/token"),
    };
  }
  return { kind: "none" };
}
