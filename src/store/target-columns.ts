/**
 * The columns of a target's stored tables that every layer reading them names: the event log's
 * operation, payload hash and commit, the target's data columns, and what makes a version live.
 * The plan (plan/target.ts) builds the tables from these; query/, serve/ and sources/ read them.
 */

import type { Dialect } from '../dialects/dialect.js';
import type { ColumnInfo } from '../dialects/driver.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { Flow } from '../flow/flow.js';

/** The column of the event log and the quarantine that holds the number of the scdkit commit that wrote the row. */
export const COMMIT = `${INTERNAL_COLUMN_PREFIX}commit`;
/** The event log's hash of an event's payload. */
export const HASH = `${INTERNAL_COLUMN_PREFIX}hash`;
/** The event log's operation of an event: OP_UPSERT, OP_DELETE or OP_TRUNCATE. */
export const OP = `${INTERNAL_COLUMN_PREFIX}op`;

/** The operations OP holds. */
export const OP_UPSERT = 0;
export const OP_DELETE = 1;
export const OP_TRUNCATE = 2;

/** The SQL type of __START_AT/__END_AT: the sequence's own type, or a struct of its parts. */
export function sequenceType(dialect: Dialect, model: ColumnModel): string {
  return model.seq.length === 1 ? model.seq[0]!.type : dialect.structType(model.seq.map((c) => [c.name, c.type]));
}

/** Data columns of the target in source order: keys and payload interleaved as the source had them. */
export function dataColumns(model: ColumnModel): ColumnInfo[] {
  const all = [...model.keys, ...model.payload];
  const order = (c: ColumnInfo) => {
    const i = model.source.findIndex((s) => s.name === c.name);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return all.sort((a, b) => order(a) - order(b));
}

/** A condition over target columns: the row is a live (current, not deleted) version. */
export function currentCondition(flow: Flow, model: ColumnModel, d: Dialect, alias = ''): string {
  const q = (c: string) => `${alias}${d.quote(c)}`;
  if (flow.storedAs === 'scd1') return 'true';
  const end = flow.endSentinel === undefined ? `${q(flow.endAtColumn)} IS NULL` : `${q(flow.endAtColumn)} = ${sentinelValue(flow, model, d)}`;
  return flow.deletes === 'tombstone' ? `${end} AND NOT ${q(flow.deletedColumn)}` : end;
}

/** The end sentinel is flow configuration (not data); it is written as a checked, cast literal. */
export function sentinelValue(flow: Flow, model: ColumnModel, d: Dialect): string {
  const v = flow.endSentinel!;
  const lit = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'NULL') : `'${v.replace(/'/g, "''")}'`;
  return `CAST(${lit} AS ${sequenceType(d, model)})`;
}
