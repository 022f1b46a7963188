// Hostile strings stored in every user-settable field of every family, then every GET/HEAD route that can show
// them requested: the server process stays alive, no answer is a 5xx, every header value is bytes an HTTP/1.1
// writer may send, an accepted value reads back as stored, and nothing stored before is lost. The server runs
// as a child process, so a panic is reported as the process's exit. WHARF_HOSTILE_FIELD_RUNS scales it.

import fc from "fast-check";
import { assertEquals } from "../helpers/assert.ts";
import { seed } from "./check.ts";
import { allReads, readsFor, type StoredField, storedFields } from "./stored_fields.ts";
import { hostileString, hostileUrl, probe } from "./stored_strings.ts";
import { openStoredWorld, type StoredWorld } from "./stored_world.ts";

const runs = Number(Deno.env.get("WHARF_HOSTILE_FIELD_RUNS") ?? "80");

/** What an accepted value may read back as: itself, or (URL fields) its canonical form. */
function acceptedForms(field: StoredField, value: string): unknown[] {
  if (!field.url) return [value];
  try {
    return [value, new URL(value).href, new URL(value).href.replace(/\/+$/, "")];
  } catch {
    return [value];
  }
}

/** Every read of `w` answered (GET and HEAD), each checked by probe; their statuses. */
async function readAll(w: StoredWorld, field: StoredField): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  for (const read of readsFor(field, w)) {
    for (const method of ["GET", "HEAD"]) {
      statuses[`${method} ${read.path}`] = (await probe(w, method, read.path, read.headers(w))).status;
    }
  }
  return statuses;
}

async function statusesOfAll(w: StoredWorld): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const read of allReads(w)) out[read.path] = (await probe(w, "GET", read.path, read.headers(w))).status;
  return out;
}

async function storeAndShow(w: StoredWorld, field: StoredField, value: string): Promise<void> {
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
  await readAll(w, field);
}

Deno.test({
  name: "hostile strings stored in every user-settable field never end the process, 5xx or break a header",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const w = await openStoredWorld();
    try {
      const before = await statusesOfAll(w);
      await t.step("stored fields, then every route that can show them", async () => {
        // The field by name, so a counterexample reads as one.
        const byName = new Map(storedFields.map((f) => [f.name, f]));
        const request = fc.constantFrom(...storedFields).chain((field) =>
          (field.url ? hostileUrl : hostileString).map((value) => ({ field: field.name, value }))
        );
        await fc.assert(
          fc.asyncProperty(request, ({ field, value }) => storeAndShow(w, byName.get(field)!, value)),
          { numRuns: runs, seed, endOnFailure: true },
        );
      });
      await t.step("nothing stored before is lost", async () => {
        assertEquals(await statusesOfAll(w), before);
      });
    } finally {
      await w.stop();
    }
  },
});
