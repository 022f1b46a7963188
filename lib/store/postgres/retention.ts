// Which log-table rows the checkpoint writer may delete: those covered by the checkpoint and beyond the embedded
// log's limits (retainIndexes, retainBytes), but not those a stream reader on any live node still needs, except
// beyond pinBytes of such rows: a reader that far behind is cut off as on the data directory (it goes on from the
// oldest row left).

import type { Sql } from "./schema.ts";

export interface LogTableLimits {
  retainIndexes: number;
  retainBytes: number;
  pinBytes: number;
}

export interface RetentionInput extends LogTableLimits {
  /** The newest Index the checkpoint in the documents table reflects. */
  checkpointIndex: number;
  /** The newest committed Index this node knows. */
  lastIndex: number;
  /** The lowest Index a reader on a live node still needs (Infinity when none). */
  slowestReader: number;
}

/**
 * The lowest Index to keep: every row below it may be deleted. Sizes are PostgreSQL's stored sizes of the lines
 * (pg_column_size: after compression), read only when a limit in bytes can matter.
 */
export async function retentionFloor(sql: Sql, input: RetentionInput): Promise<number> {
  let beyondLimits = input.lastIndex - input.retainIndexes;
  if (beyondLimits < input.checkpointIndex) {
    const [size] = await sql`SELECT pg_total_relation_size('wharf_log') AS bytes`;
    if (Number(size!.bytes) > input.retainBytes) {
      // The table's size counts dead rows and indexes too: only then are the rows' own sizes summed.
      beyondLimits = Math.max(beyondLimits, await lastIndexBeyond(sql, Infinity, input.retainBytes));
    }
  }
  const covered = Math.min(input.checkpointIndex, beyondLimits) + 1;
  if (input.slowestReader >= covered) return covered;
  // Rows from the slowest reader up to `covered` are pinned; past pinBytes of them the oldest go anyway.
  const cut = await lastIndexBeyond(sql, covered, input.pinBytes, input.slowestReader);
  return Math.max(input.slowestReader, cut + 1);
}

/**
 * The newest Index below `before` (and at or above `from`) such that the rows after it, up to `before`, already
 * hold more than `bytes`; 0 when they all fit.
 */
async function lastIndexBeyond(sql: Sql, before: number, bytes: number, from = 0): Promise<number> {
  const upper = Number.isFinite(before) ? before : Number.MAX_SAFE_INTEGER;
  const [row] = await sql`
    SELECT max(idx) AS idx FROM (
      SELECT idx, sum(pg_column_size(line)) OVER (ORDER BY idx DESC) AS after
      FROM wharf_log WHERE idx < ${upper} AND idx >= ${from}) AS sized
    WHERE after > ${bytes}`;
  return row?.idx === null || row?.idx === undefined ? 0 : Number(row.idx);
}
