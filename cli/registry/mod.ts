// `wharf registry …`: the admin API from a shell (users, organizations, service principals, maintenance, tokens)
// against a running server, `admin reset-password` offline on a data directory, and `import`.

import { flag, parse, UsageError } from "./args.ts";
import type { CliIo } from "./io.ts";
import { apiRequest } from "./requests.ts";
import { resetPassword } from "./reset_password.ts";

export { type CliIo, processIo } from "./io.ts";

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

/** Runs one `wharf registry …` command; returns the exit code. */
export async function runRegistryCli(args: readonly string[], io: CliIo): Promise<number> {
  if (args[0] === "import") {
    // A client of two registries with its own options and usage.
    const { runImport } = await import("../import/mod.ts");
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
    const { method, path, body } = await apiRequest(p, io);
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
