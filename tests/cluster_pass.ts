// The second CI pass (`deno task test:cluster`): every suite that starts wharf servers runs again with them on
// PostgreSQL + Swift's S3 API (WHARF_TEST_STORAGE=postgres-s3) and hosted downloads as 302s to presigned URLs
// (WHARF_TEST_DOWNLOADS=redirect), the real Vagrant clients included. Arguments narrow it to those files or
// folders. Exits with deno test's status.

import { postgresSkipReason, startPostgres } from "./fixtures/postgres.ts";
import { startSwift, swiftSkipReason } from "./fixtures/swift.ts";

/** The API suites of the three families and what they share (the server harness, the HTTP layer). */
const suites = [
  "tests/registry/",
  "tests/registry_clients/",
  "tests/registry_fuzz/",
  "tests/authmethods/",
  "tests/events/",
  "tests/console/",
  "tests/foundation/",
  "tests/hostile/",
  "tests/server_smoke_test.ts",
];

/**
 * Files in those folders whose outcome the backend cannot change: those that start no server through
 * startTestServer (pure units and parsers, the file backend's own store tests, tests that spawn `main.ts` as a
 * child on a data directory: crash, shutdown, raw memory), and two that test only the HTTP layer and the page
 * markup. tests/scale/ and the conformance kit run once, in the first
 * pass: the scale tests pick their backends themselves.
 */
const storageIndependent = [
  // Parsers, filters, escaping, pure rules.
  "tests/authmethods/bexpr_gobexpr_test.ts",
  "tests/authmethods/bexpr_gostr_test.ts",
  "tests/authmethods/bexpr_test.ts",
  "tests/authmethods/escape_ldap_test.ts",
  "tests/authmethods/layout_test.ts",
  "tests/authmethods/profile_compare_test.ts",
  "tests/console/html_test.ts",
  "tests/events/jobs_decode_test.ts",
  "tests/events/nodes_decode_test.ts",
  "tests/events/policy_acl_test.ts",
  "tests/events/policy_fuzz_test.ts",
  "tests/events/policy_nomad_test.ts",
  "tests/events/policy_parse_test.ts",
  "tests/foundation/config_test.ts",
  "tests/foundation/router_reference_test.ts",
  "tests/foundation/secret_paths_test.ts",
  "tests/foundation/shared_fetch_test.ts",
  "tests/foundation/import_layers_test.ts",
  "tests/foundation/docs_config_test.ts",
  "tests/registry/architecture_rules_test.ts",
  "tests/registry/code_failures_test.ts",
  "tests/registry/import_progress_test.ts",
  "tests/registry/rules_test.ts",
  // Units on an in-process context or a client against its own fixture (no wharf server).
  "tests/authmethods/client_ldap_test.ts",
  "tests/authmethods/client_oidc_test.ts",
  "tests/authmethods/oidc_attempts_test.ts",
  "tests/authmethods/throttle_test.ts",
  "tests/authmethods/tokens_test.ts",
  "tests/console/code_steps_test.ts",
  "tests/events/acl_sso_provider_cache_test.ts",
  "tests/events/module_close_test.ts",
  "tests/events/stream_unit_test.ts",
  "tests/foundation/failure_throttle_test.ts",
  "tests/foundation/keyed_turns_test.ts",
  "tests/foundation/http_body_test.ts",
  // The file backend's own pieces (tests/scale/store_contract_test.ts holds both backends to one contract).
  "tests/foundation/blob_orphan_race_test.ts",
  "tests/foundation/blobs_large_test.ts",
  "tests/foundation/blobs_test.ts",
  "tests/foundation/documents_test.ts",
  "tests/foundation/eventlog_test.ts",
  "tests/foundation/locks_test.ts",
  "tests/foundation/log_test.ts",
  "tests/foundation/packs_test.ts",
  // The HTTP layer and the page markup, not what is stored: connection pressure and slow clients, and the
  // console's XSS inertness, cross-site posts and accessibility (its flows and pages run on both backends in
  // tests/console/browser_flow_test.ts and http_test.ts). ~75 s of the pass.
  "tests/foundation/connection_limits_test.ts",
  "tests/foundation/shutdown_race_test.ts",
  "tests/console/browser_safety_test.ts",
  // `main.ts` spawned on a data directory: backups of it (the cluster's in tests/scale/backup_cluster_test.ts),
  // kill -9 replay, graceful shutdown, a child's memory and open files.
  "tests/events/acl_sso_stampede_fd_test.ts",
  "tests/foundation/backup_document_lines_test.ts",
  "tests/foundation/backup_entry_cap_test.ts",
  "tests/foundation/backup_manifest_shape_test.ts",
  "tests/foundation/backup_memory_test.ts",
  "tests/foundation/backup_stale_files_test.ts",
  "tests/foundation/backup_test.ts",
  "tests/foundation/backup_value_cap_test.ts",
  "tests/foundation/crash_test.ts",
  "tests/foundation/shutdown_test.ts",
  "tests/hostile/chunked_body_memory_test.ts",
  "tests/hostile/token_cache_memory_test.ts",
  "tests/registry/markdown_bounds_test.ts",
];

/** The *_test.ts files under `paths` but the storage-independent ones (deno test's --ignore honours only the
 * first path given). */
async function testFiles(paths: string[]): Promise<string[]> {
  const skip = new Set(storageIndependent);
  const files: string[] = [];
  const walk = async (path: string) => {
    if (!(await Deno.stat(path)).isDirectory) {
      files.push(path);
      return;
    }
    for await (const e of Deno.readDir(path)) {
      const child = `${path.replace(/\/+$/, "")}/${e.name}`;
      if (e.isDirectory) await walk(child);
      else if (e.name.endsWith("_test.ts")) files.push(child);
    }
  };
  for (const p of paths) await walk(p);
  return files.filter((f) => !skip.has(f)).sort();
}

// One PostgreSQL and one Swift for the whole pass (each test file makes its databases and buckets on them),
// rather than an initdb and a Swift start for each of the ~90 test files.
for (const reason of [postgresSkipReason, swiftSkipReason]) {
  if (reason) {
    console.error(`test:cluster cannot run: ${reason}`);
    Deno.exit(1);
  }
}
const postgres = await startPostgres();
const swift = await startSwift();
let code = 1;
try {
  const { WHARF_BLOB_STORE: _, ...s3 } = swift.env("unused");
  const command = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-prompt", ...await testFiles(Deno.args.length ? Deno.args : suites)],
    env: {
      WHARF_TEST_STORAGE: "postgres-s3",
      WHARF_TEST_DOWNLOADS: "redirect",
      WHARF_TEST_SHARED_POSTGRES: `postgres://wharf@127.0.0.1:${postgres.port}/postgres`,
      WHARF_TEST_SHARED_S3: JSON.stringify(s3),
    },
    stdin: "null",
  });
  code = (await command.spawn().status).code;
} finally {
  await swift.stop().catch(() => {});
  await postgres.stop().catch(() => {});
}
Deno.exit(code);
