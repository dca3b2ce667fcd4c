import { type Dialect, rowIdOf } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { Flow } from '../flow/flow.js';
import { feedColumns } from '../store/feed.js';
import { type StoreNames, written } from '../store/names.js';
import { COMMIT, currentCondition, dataColumns, HASH, OP, sequenceType } from '../store/target-columns.js';
import { createStateSql } from './key-state.js';

/**
 * The current flag of a version whose end is `isOpen` (a SQL boolean): the boolean itself, or the
 * flow's two values (isCurrentValues), as text literals.
 */
export function currentFlag(flow: Flow, isOpen: string): string {
  if (!flow.isCurrentValues) return isOpen;
  const [yes, no] = flow.isCurrentValues.map((v) => `'${v.replace(/'/g, "''")}'`);
  return `CASE WHEN ${isOpen} THEN ${yes} ELSE ${no} END`;
}

/** Whether a current flag's value (a SQL expression of the flag column) says current. */
export function flagIsCurrent(flow: Flow, flag: string): string {
  return flow.isCurrentValues ? `(${flag} = '${flow.isCurrentValues[0].replace(/'/g, "''")}')` : flag;
}

/** Every column of the target table, in order. */
export function targetColumns(flow: Flow, model: ColumnModel, d: Dialect): ColumnInfo[] {
  const cols: ColumnInfo[] = [];
  if (flow.surrogateKey) cols.push({ name: flow.surrogateKey, type: d.types.text });
  cols.push(...dataColumns(model), ...previousColumns(flow, model));
  if (flow.storedAs === 'scd2') {
    const st = sequenceType(d, model);
    cols.push({ name: flow.startAtColumn, type: st }, { name: flow.endAtColumn, type: st });
    if (flow.isCurrentColumn) cols.push({ name: flow.isCurrentColumn, type: flow.isCurrentValues ? d.types.text : d.types.bool });
    if (flow.deletes === 'tombstone') cols.push({ name: flow.deletedColumn, type: d.types.bool });
  }
  return cols;
}

/**
 * The columns of previous values (flow.previousValues, SCD type 3), each of its column's type, in
 * the flow's order: `of` is the payload column whose previous value it holds.
 */
export function previousColumns(flow: Flow, model: ColumnModel): Array<ColumnInfo & { of: string }> {
  return Object.entries(flow.previousValues ?? {}).map(([of, name]) => ({ name, of, type: model.payload.find((p) => p.name === of)!.type }));
}

/** The columns that identify a target row: keys, plus the version start for scd2. */
export function identityColumns(flow: Flow, model: ColumnModel): string[] {
  return [...model.keys.map((k) => k.name), ...(flow.storedAs === 'scd2' ? [flow.startAtColumn] : [])];
}

/**
 * The row id of the target's rows, or undefined where a column of the target hides it (a user's
 * column named rowid on DuckDB, dialect.ts shadowsRowId): a commit then finds the stored rows it
 * removes and closes by their identity (identityColumns, unique among stored rows), never by a
 * user's values.
 */
export function targetRowId(flow: Flow, model: ColumnModel, d: Dialect): string | undefined {
  return rowIdOf(
    d,
    targetColumns(flow, model, d).map((c) => c.name),
  );
}

/** `alias`'s row id, or a null of the row id's type where there is none to read (targetRowId). */
export function rowIdOrNull(d: Dialect, rowId: string | undefined, alias: string): string {
  return rowId ? `${alias}.${rowId}` : `CAST(NULL AS ${d.types.bigint})`;
}

/** Columns of the event log: every source column, the operation and the payload hash. */
export function eventColumns(model: ColumnModel, d: Dialect): ColumnInfo[] {
  return [...model.source, { name: OP, type: d.types.smallint }, { name: HASH, type: d.types.hash }];
}

/**
 * The statements that make a target's stored tables, in steps: each step's statements read nothing
 * another of the same step makes (they may run at once: CommitExecutor.runWrites), and a step
 * needs the ones before it (the types, then the tables, then the view over the target).
 */
export function createStoreSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames): string[][] {
  const q = d.quote;
  const defs = (cols: ColumnInfo[]) => cols.map((c) => `${q(c.name)} ${c.type}`).join(', ');
  const target = targetColumns(flow, model, d);
  return [
    d.prepareTypes(target.map((c) => c.type)),
    [
      d.createTable(names.target, defs(target), { changeFeed: d.capabilities.changeFeed }),
      d.createTable(names.events, `${defs(eventColumns(model, d))}, ${q(COMMIT)} ${d.types.int} NOT NULL`),
      d.createTable(names.quarantine, `${q(COMMIT)} ${d.types.int} NOT NULL, file ${d.types.text}, line ${d.types.bigint}, reason ${d.types.text} NOT NULL, raw ${d.types.text}`),
      // Where the engine keeps the target's changes itself, scdkit keeps no feed of its own.
      ...(d.capabilities.changeFeed
        ? []
        : [
            d.createTable(
              names.changes,
              `${defs(target)}, _change_type ${d.types.text} NOT NULL, _commit_version ${d.types.int} NOT NULL, _commit_timestamp ${d.types.timestamptz} NOT NULL${feedExtra(flow, target, d)}`,
            ),
          ]),
      createStateSql(model, d, names),
    ],
    [currentViewSql(flow, model, d, names)],
  ].filter((step) => step.length > 0);
}

/** The feed's own columns (store/feed.ts). */
function feedExtra(flow: Flow, target: ColumnInfo[], d: Dialect): string {
  return feedColumns(flow, target, d.types.bool)
    .map((c) => `, ${d.quote(c.name)} ${c.type}`)
    .join('');
}

/** `<target>_current`: the live version of every key. */
export function currentViewSql(flow: Flow, model: ColumnModel, d: Dialect, names: StoreNames): string {
  const q = d.quote;
  // The target by the name a commit writes it by: a commit's pinned reads (Spark) are temporary
  // views, which no view that outlives the commit may name.
  return `CREATE OR REPLACE VIEW ${q(names.current)} AS SELECT * FROM ${written(names, 'target', q)} WHERE ${currentCondition(flow, model, d)}`;
}

/**
 * The end sentinel must be a value of the sequence's type, the same value read back (a number
 * that a cast would round or overflow, a text that is no timestamp, are refused before anything
 * changes, not met by the engine halfway through a commit).
 */
/**
 * The end column's value for a version that ends where the next starts (`next`, of the sequence's
 * type): `next` itself, or with endInclusive the last value before it (a day less for a date, one
 * less for an integer).
 */
export function endValue(flow: Flow, model: ColumnModel, d: Dialect, next: string): string {
  if (!flow.endInclusive) return next;
  const type = sequenceType(d, model);
  return d.sameType(type, d.types.date) ? `CAST(${next} - INTERVAL '1' DAY AS ${type})` : `(${next} - 1)`;
}

/** endInclusive needs a sequence with a unit to step back by: one date or integer column. */
export function checkInclusiveEnd(flow: Flow, model: ColumnModel, d: Dialect): void {
  if (!flow.endInclusive || flow.storedAs !== 'scd2') return;
  const type = sequenceType(d, model);
  if (model.seq.length === 1 && [d.types.date, d.types.int, d.types.bigint].some((t) => d.sameType(type, t))) return;
  throw new ScdError(
    'FLOW_INVALID',
    `endInclusive steps back one day or one unit from the next start, and the sequence is ${model.seq.length > 1 ? 'a list of columns' : `of type ${type}`}`,
    {
      file: flow.origin,
      field: 'endInclusive',
      fix: 'remove endInclusive (the end is then the next start, excluded), or sequence by one date or integer column',
    },
  );
}

export async function checkEndSentinel(driver: Driver, flow: Flow, model: ColumnModel): Promise<void> {
  const v = flow.endSentinel;
  if (v === undefined || flow.storedAs !== 'scd2') return;
  const d = driver.dialect;
  // A text sentinel as text: PostgreSQL's tryCast cannot take a literal of unknown type.
  const lit = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : 'NULL') : `CAST('${v.replace(/'/g, "''")}' AS ${d.types.text})`;
  const type = sequenceType(d, model);
  const cast = d.tryCast(lit, type);
  const fits = typeof v === 'number' ? `${cast} IS NOT NULL AND ${cast} = ${lit}` : `${cast} IS NOT NULL`;
  const row = (await driver.query(`SELECT CASE WHEN ${fits} THEN 1 ELSE 0 END AS fits`))[0]!;
  if (Number(row.fits) !== 1)
    throw new ScdError('FLOW_INVALID', `endSentinel ${JSON.stringify(v)} is not a value of the sequence's type ${type}`, {
      file: flow.origin,
      field: 'endSentinel',
      fix: `give a value of type ${type} (${model.seq.map((c) => c.name).join(', ')}), or remove endSentinel to end current versions at null`,
    });
}
