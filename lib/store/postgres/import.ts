// Bulk writes into an empty database, shared by `storage migrate` and `backup restore`: the refusal of a database
// that already holds wharf data, the retained log (with the head) in one transaction, and usage counters.

import { ConfigError } from "../../errors.ts";
import type { Sql } from "./schema.ts";

/** Log lines written per INSERT. */
const rowsPerInsert = 500;

/** Throws ConfigError when the database already holds wharf data (a log, documents or counters). */
export async function refuseNonEmpty(sql: Sql): Promise<void> {
  const [row] = await sql`SELECT (SELECT last FROM wharf_head) AS last,
    (SELECT count(*) FROM wharf_documents) AS docs, (SELECT count(*) FROM wharf_counters) AS counters`;
  if (Number(row!.last) > 0 || Number(row!.docs) > 0 || Number(row!.counters) > 0) {
    throw new ConfigError(
      "the database already holds wharf data: storage migrate writes only into an empty one",
    );
  }
}

/**
 * Writes `lines` (in index order) and sets the head to `head`, all in one transaction; `written` hears the count
 * after each INSERT. Returns how many lines were written.
 */
export async function importLog(
  sql: Sql,
  lines: AsyncIterable<{ index: number; line: string }>,
  head: number,
  written: (count: number) => void = () => {},
): Promise<number> {
  let count = 0;
  await sql.begin(async (tx) => {
    let rows: Array<{ i: number; l: string }> = [];
    const flush = async () => {
      if (!rows.length) return;
      await tx`INSERT INTO wharf_log (idx, line)
        SELECT i, l FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(i bigint, l text)`;
      rows = [];
      written(count);
    };
    for await (const { index, line } of lines) {
      rows.push({ i: index, l: line });
      count++;
      if (rows.length >= rowsPerInsert) await flush();
    }
    await flush();
    await tx`UPDATE wharf_head SET last = ${head}`;
  });
  return count;
}

/** Adds usage counter `name`'s values (a counters file as the embedded store flushes it); returns how many. */
export async function importCounters(
  sql: Sql,
  name: string,
  values: Record<string, number>,
): Promise<number> {
  const rows = Object.entries(values).map(([k, v]) => ({ k, v }));
  if (!rows.length) return 0;
  await sql`INSERT INTO wharf_counters (name, key, value)
    SELECT ${name}, k, v FROM json_to_recordset(${JSON.stringify(rows)}::text::json) AS x(k text, v float8)`;
  return rows.length;
}
