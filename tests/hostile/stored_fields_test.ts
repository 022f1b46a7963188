// Hostile strings stored in every user-settable field of every family, then every GET/HEAD route that can show
// them requested: the server process stays alive, no answer is a 5xx, every header value is bytes an HTTP/1.1
// writer may send, an accepted value reads back as stored, and nothing stored before is lost. The server runs
// as a child process, so a panic is reported as the process's exit. WHARF_HOSTILE_FIELD_RUNS scales it.

import fc from "fast-check";
import { assertEquals } from "../helpers/assert.ts";
import { seed } from "./check.ts";
import { allReads, oidcCallback, readsFor, type StoredField, storedFields } from "./stored_fields.ts";
import { controlCharacters, hostileString, hostileUrl, inUrl, probe } from "./stored_strings.ts";
import { openStoredWorld, type StoredWorld } from "./stored_world.ts";

const runs = Number(Deno.env.get("WHARF_HOSTILE_FIELD_RUNS") ?? "120");
/** WHARF_HOSTILE_FIELDS (names, comma-separated) narrows the run to those fields, to reproduce one. */
const only = Deno.env.get("WHARF_HOSTILE_FIELDS")?.split(",");
const fields = only ? storedFields.filter((f) => only.includes(f.name)) : storedFields;

/** What an accepted value may read back as: itself, or (URL fields) its canonical form. */
function acceptedForms(field: StoredField, value: string): unknown[] {
  if (!field.url) return [value];
  try {
    return [value, new URL(value).href, new URL(value).href.replace(/\/+$/, "")];
  } catch {
    return [value];
  }
}

/** Every read of `field` answered with `method` (GET, or HEAD: its headers without the body), each checked. */
async function readAll(w: StoredWorld, field: StoredField, method: string): Promise<void> {
  for (const read of readsFor(field, w)) await probe(w, method, read.path, read.headers(w));
  if (field.family === "auth") await oidcCallback(w);
}

/** The reads of every family that answer (2xx or a redirect) now. */
async function answeringReads(w: StoredWorld): Promise<string[]> {
  const out: string[] = [];
  for (const read of allReads(w)) {
    const answer = await probe(w, "GET", read.path, read.headers(w));
    if (answer.status < 400) {
      out.push(`${read.path} as ${read.headers.name || "anonymous"}`);
    }
  }
  return out;
}

async function storeAndShow(
  w: StoredWorld,
  field: StoredField,
  value: string,
  method: string,
): Promise<void> {
  const answer = await field.write(w, value);
  if (answer.status < 300 && field.stored) {
    const stored = await field.stored(w);
    const forms = acceptedForms(field, value);
    if (!forms.includes(stored)) {
      throw new Error(
        `${field.name}: accepted ${JSON.stringify(value.slice(0, 80))} but reads back ${
          JSON.stringify(String(stored).slice(0, 80))
        }`,
      );
    }
  }
  await readAll(w, field, method);
}

Deno.test({
  name: "hostile strings stored in every user-settable field never end the process, 5xx or break a header",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const w = await openStoredWorld();
    try {
      const before = await answeringReads(w);
      await t.step(
        "an OIDC api_url_prefix: control characters refused, others stored canonical",
        async () => {
          const field = storedFields.find((f) => f.name === "oidc api_url_prefix")!;
          const refused = await field.write(w, "https://files.example/a\u0001b");
          assertEquals(refused.status, 400);
          assertEquals(JSON.parse(refused.text).details.request_fields[0].name, "attributes.api_url_prefix");
          const accepted = await field.write(w, `${w.url}/\u{1f4a9}\u2028/`);
          assertEquals(accepted.status, 200, accepted.text);
          assertEquals(await field.stored!(w), `${w.url}/%F0%9F%92%A9%E2%80%A8`);
          await field.inHeaders!(w);
        },
      );
      await t.step(
        "every control character, a lone surrogate and a non-BMP one in fields that reach a header",
        async () => {
          const pieces = [...controlCharacters, "\ud800", "\u{1f4a9}", "\u2028"];
          const failures: string[] = [];
          for (const field of fields.filter((f) => f.inHeaders)) {
            for (const piece of pieces) {
              const value = field.url ? inUrl(piece, 0) : `/a${piece}b`;
              try {
                const answer = await field.write(w, value);
                if (answer.status < 400) await field.inHeaders!(w);
              } catch (err) {
                failures.push(
                  `${field.name} = ${JSON.stringify(value)}: ${err instanceof Error ? err.message : err}`,
                );
                if (/server process exited/.test(String(err))) break;
              }
            }
            if (failures.some((f) => /server process exited/.test(f))) break;
          }
          assertEquals(failures, []);
        },
      );
      await t.step("stored fields, then every route that can show them", async () => {
        // The field by name, so a counterexample reads as one.
        const byName = new Map(fields.map((f) => [f.name, f]));
        const request = fc.constantFrom(...fields).chain((field) =>
          fc.record({
            field: fc.constant(field.name),
            value: field.url ? hostileUrl : hostileString,
            method: fc.constantFrom("GET", "HEAD"),
          })
        );
        await fc.assert(
          fc.asyncProperty(
            request,
            ({ field, value, method }) => storeAndShow(w, byName.get(field)!, value, method),
          ),
          { numRuns: runs, seed, endOnFailure: true },
        );
      });
      await t.step("nothing stored before is lost", async () => {
        const now = new Set(await answeringReads(w));
        assertEquals(before.filter((read) => !now.has(read)), []);
      });
    } finally {
      await w.stop();
    }
  },
});
