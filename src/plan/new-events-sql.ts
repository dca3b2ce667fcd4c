import { type Dialect, rowIdOf } from '../dialects/dialect.js';
import { firstOfEachSql } from '../dialects/first-of-each.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import { type StoreNames, TMP } from '../store/names.js';
import { HASH, OP, OP_TRUNCATE } from '../store/target-columns.js';
import { DROP, logColumns, REASON } from './events-sql.js';
import { keyJoin, SLOW } from './keys-sql.js';
import type { ColumnModel } from './model.js';

/** An event's identity in the log: key, sequence, operation and payload hash. */
const identity = (model: ColumnModel) => [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name), OP, HASH];
/**
 * Valid batch events, each once. Duplicates are found by their identity alone (a narrow
 * aggregate, which engines spill to disk) and only those are deduplicated row by row: a
 * DISTINCT ON over whole rows must hold every row's values in memory at once.
 */
export function validSql(model: ColumnModel, d: Dialect): { dups: string; valid: string; distinct: string } {
  const q = d.quote;
  const id = identity(model).map(q);
  const ok = `b.${q(REASON)} IS NULL AND NOT b.${q(DROP)}`;
  // The rows of one identity are equal events: any one of them is kept.
  const firstOf = (from: string) =>
    firstOfEachSql(d, { columns: logColumns(model).map((c) => `b.${q(c)}`), names: logColumns(model), from, partition: id.map((c) => `b.${c}`), order: [] });
  if (!d.capabilities.distinctOn) {
    // Without DISTINCT ON, repeats are not looked for first: one numbering of every row.
    const distinct = d.scratch(TMP.valid, firstOf(`${q(TMP.batch)} b WHERE ${ok}`));
    return { distinct, dups: distinct, valid: distinct };
  }
  // Keys and sequences of valid events are never null; truncates have a null key.
  const same = identity(model)
    .map((c) => (model.keys.some((k) => k.name === c) ? `x.${q(c)} IS NOT DISTINCT FROM b.${q(c)}` : `x.${q(c)} = b.${q(c)}`))
    .join(' AND ');
  const cols = logColumns(model)
    .map((c) => `b.${q(c)}`)
    .join(', ');
  return {
    // Every row deduplicated at once (a small batch: one statement, no repeats table).
    distinct: d.scratch(TMP.valid, firstOf(`${q(TMP.batch)} b WHERE ${ok}`)),
    dups: d.scratch(TMP.dups, `SELECT ${id.join(', ')} FROM ${q(TMP.batch)} b WHERE ${ok} GROUP BY ${id.join(', ')} HAVING count(*) > 1`),
    valid: d.scratch(
      TMP.valid,
      `SELECT ${cols} FROM ${q(TMP.batch)} b LEFT JOIN ${q(TMP.dups)} x ON ${same} WHERE ${ok} AND x.${q(model.seq[0]!.name)} IS NULL
UNION ALL
${firstOf(`${q(TMP.batch)} b JOIN ${q(TMP.dups)} x ON ${same} WHERE ${ok}`)}`,
    ),
  };
}

/** The log's events of the slow keys, before this commit's events are appended. */
export function slowLogSql(model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  return d.scratch(
    TMP.slowLog,
    `SELECT ${logColumns(model)
      .map((c) => `l.${q(c)}`)
      .join(', ')}
FROM ${q(names.events)} l JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, 'l', 'k')} WHERE k.${q(SLOW)}`,
  );
}

/**
 * Events new to the log: those of fast keys all are (they come after the key's last event);
 * those of slow keys unless the log holds them; truncates unless the log holds them.
 */
export function freshSql(model: ColumnModel, d: Dialect, names: StoreNames, { truncates }: { truncates: boolean }): string {
  const q = d.quote;
  // The outer alias is one no column may have: Spark reads `v.x` in a correlated subquery as the
  // field x of a column v of the inner table, where there is one.
  const v = q(`${INTERNAL_COLUMN_PREFIX}v`);
  const cols = logColumns(model)
    .map((c) => `${v}.${q(c)}`)
    .join(', ');
  // Plain equalities only (hashable on every engine): slow keys are never null, truncates have none.
  const same = (other: string, withKeys = true) =>
    identity(model)
      .filter((c) => withKeys || !model.keys.some((k) => k.name === c))
      .map((c) => `${other}.${q(c)} = ${v}.${q(c)}`)
      .join(' AND ');
  return d.scratch(
    TMP.newEvents,
    `SELECT ${cols} FROM ${q(TMP.valid)} ${v} JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, v, 'k')} WHERE NOT k.${q(SLOW)}
UNION ALL
SELECT ${cols} FROM ${q(TMP.valid)} ${v} JOIN ${q(TMP.keys)} k ON ${keyJoin(model, d, v, 'k')}
  WHERE k.${q(SLOW)} AND NOT EXISTS (SELECT 1 FROM ${q(TMP.slowLog)} l WHERE ${same('l')})${
    truncates
      ? `
UNION ALL
SELECT ${cols} FROM ${q(TMP.valid)} ${v} WHERE ${v}.${q(OP)} = ${OP_TRUNCATE}
  AND NOT EXISTS (SELECT 1 FROM ${q(names.events)} l WHERE l.${q(OP)} = ${OP_TRUNCATE} AND ${same('l', false)})`
      : ''
  }`,
  );
}

/**
 * Without truncates: the valid events the log already holds (of slow keys: TMP.slowLog) go, and
 * what is left is new (freshSql's result, without copying the rest). Keys are never null here.
 */
export function knownSql(model: ColumnModel, d: Dialect): string {
  const q = d.quote;
  const same = (v: string) =>
    identity(model)
      .map((c) => `l.${q(c)} = ${v}.${q(c)}`)
      .join(' AND ');
  // By row id from a plain join: a correlated EXISTS is decorrelated by DuckDB into a join on
  // IS NOT DISTINCT FROM over a grouping of every valid event, which costs several times more
  // (docs/decisions/0058-no-correlated-exists-in-a-large-delete.md).
  // A source column that hides the row id (rowIdOf): by the events' identity, correlated.
  const rowId = rowIdOf(d, logColumns(model));
  return rowId
    ? `DELETE FROM ${q(TMP.valid)} WHERE ${rowId} IN (SELECT v.${rowId} FROM ${q(TMP.valid)} v JOIN ${q(TMP.slowLog)} l ON ${same('v')})`
    : `DELETE FROM ${q(TMP.valid)} WHERE EXISTS (SELECT 1 FROM ${q(TMP.slowLog)} l WHERE ${same(q(TMP.valid))})`;
}

/**
 * New events that tie: share key and sequence with a different event, new or already logged
 * (truncates, which have no key, tie with each other). The new events and the slow keys' logged
 * ones are each distinct (validSql, knownSql), and none is in both: a new event ties exactly when
 * its key and sequence hold more than one of them. A fast key has no logged event at a new
 * event's sequence, and a simple key's one new event ties with nothing.
 */
export function tiesSql(model: ColumnModel, d: Dialect, names: StoreNames, { truncates }: { truncates: boolean }): string {
  const q = d.quote;
  // An outer alias no column may have (freshSql).
  const n = q(`${INTERNAL_COLUMN_PREFIX}n`);
  const at = [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name)].map(q).join(', ');
  const sameSeq = (a: string, b: string) => model.seq.map((c) => `${a}.${q(c.name)} = ${b}.${q(c.name)}`).join(' AND ');
  // A new truncate ties with a logged one or another new one at its sequence: the log as this
  // commit reads it may not hold the commit's own events yet (Delta: read as of the commit's start).
  const truncatesOf = (table: string) => `SELECT ${model.seq.map((c) => q(c.name)).join(', ')}, ${q(HASH)} FROM ${table} WHERE ${q(OP)} = ${OP_TRUNCATE}`;
  // One aggregate over the new and the logged events of the keys that may tie.
  return `SELECT CAST(coalesce((SELECT sum(t.f) FROM (SELECT sum(x.f) AS f FROM (
       SELECT ${at}, 1 AS f FROM ${q(TMP.newEvents)} WHERE ${q(OP)} <> ${OP_TRUNCATE}
       UNION ALL SELECT ${at}, 0 AS f FROM ${q(TMP.slowLog)}) x
     GROUP BY ${at} HAVING count(*) > 1) t), 0)
  ${
    truncates
      ? `+ (SELECT count(*) FROM ${q(TMP.newEvents)} ${n} WHERE ${n}.${q(OP)} = ${OP_TRUNCATE} AND EXISTS (SELECT 1 FROM (${truncatesOf(q(names.events))} UNION ALL ${truncatesOf(q(TMP.newEvents))}) t
     WHERE ${sameSeq('t', n)} AND t.${q(HASH)} <> ${n}.${q(HASH)}))`
      : ''
  } AS ${d.types.int}) AS n`;
}

/**
 * A query of the keys that tie (tiesSql's groups of one key and sequence with two events or more,
 * a new one among them), each once, in key order, at most `limit`: the key columns only. A
 * truncate's tie is of no key, and not listed. Each key column as text, as `scd show --key` takes it.
 */
export function tiedKeysSql(model: ColumnModel, d: Dialect, limit: number): string {
  const q = d.quote;
  const keys = model.keys.map((k) => q(k.name)).join(', ');
  const asText = model.keys.map((k) => `CAST(${q(k.name)} AS ${d.types.text}) AS ${q(k.name)}`).join(', ');
  const at = [...model.keys.map((k) => k.name), ...model.seq.map((s) => s.name)].map(q).join(', ');
  return `SELECT ${asText} FROM (SELECT DISTINCT ${keys} FROM (SELECT ${at} FROM (
       SELECT ${at}, 1 AS f FROM ${q(TMP.newEvents)} WHERE ${q(OP)} <> ${OP_TRUNCATE}
       UNION ALL SELECT ${at}, 0 AS f FROM ${q(TMP.slowLog)}) x
     GROUP BY ${at} HAVING count(*) > 1 AND sum(x.f) > 0) t) k ORDER BY ${keys} LIMIT ${limit}`;
}
