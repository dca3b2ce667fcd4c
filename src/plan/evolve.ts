import { type Dialect, exactDigits } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';
import type { Flow } from '../flow/flow.js';
import type { FlowRecord } from '../store/catalog.js';
import { type StoreNames, TMP } from '../store/names.js';
import { HASH, OP, OP_TRUNCATE } from '../store/target-columns.js';
import { castStaged, type StagedColumn } from '../typing/cast.js';
import { exactDecimal, MAX_PRECISION, numberDigits } from '../typing/exact-numbers.js';
import { sourceColumnsOf } from '../typing/staged-types.js';
import { type ColumnModel, deriveModel } from './model.js';
import { checkColumnNames } from './name-clashes.js';
import { currentViewSql, targetColumns } from './target.js';

/**
 * Bring the stored model in line with a new input (SEMANTICS §6):
 * - a new source column is refused, unless schemaEvolution is add-columns: then it is added to
 *   the event log, the target and the change feed (null in older versions);
 * - a payload column whose input type is wider than the stored one (integer → bigint → decimal)
 *   widens the stored column; an integer or decimal column meeting fractions becomes the decimal
 *   that holds both (typing/exact-numbers.ts), never a double: a widening never changes a
 *   committed value (the event log, the target, the change feed and time travel are altered);
 * - an input type that no stored value type can take and of which no value fits is refused;
 *   single values that do not fit are quarantined later, record by record.
 */
export async function evolveModel(
  driver: Driver,
  flow: Flow,
  record: FlowRecord,
  staged: ColumnInfo[],
  stagedAs: ReadonlyMap<string, StagedColumn>,
  names: StoreNames,
  at: string,
): Promise<ColumnModel> {
  const d = driver.dialect;
  const q = d.quote;
  let model = record.model;
  const source = sourceColumnsOf(staged);
  if (!source.length) return model;
  for (const [field, cols] of [
    ['keys', model.keys],
    ['sequenceBy', model.seq],
  ] as const) {
    for (const c of cols)
      if (!source.some((s) => s.name === c.name))
        throw new ScdError('SOURCE_INVALID', `column "${c.name}" is not in this input`, {
          file: flow.origin,
          field,
          fix: 'every input must carry the key and sequence columns',
        });
  }
  /** The tables with the target's columns: the target, and scdkit's own feed where the engine keeps none. */
  const withTargetColumns = [names.target, ...(d.capabilities.changeFeed ? [] : [names.changes])];
  let changed = false;
  /** A payload column changed type: the log's payload hashes are computed again, over the new type. */
  let rehash = false;
  const fresh = source.filter((c) => !model.source.some((m) => m.name === c.name));
  if (fresh.length) {
    const list = fresh.map((c) => `"${c.name}"`).join(', ');
    if (flow.schemaEvolution !== 'add-columns')
      throw new ScdError('SCHEMA_CHANGE', `new source column ${list} is not in the target`, {
        file: flow.origin,
        fix: 'set schemaEvolution: add-columns in the flow to add it, or add it to exceptColumns to ignore it',
      });
    const before = targetColumns(flow, model, d);
    const next = deriveModel(flow, [...model.source, ...fresh]);
    checkColumnNames(flow, next, d);
    const added = targetColumns(flow, next, d).filter((c) => !before.some((b) => b.name === c.name));
    for (const [table, columns] of [[names.events, fresh], ...withTargetColumns.map((t) => [t, added] as const)] as const) await addColumns(driver, table, columns);
    model = next;
    changed = true;
  }
  const fixed = new Set([...model.keys, ...model.seq].map((c) => c.name));
  // Stored exact numbers meeting binary floats (fractions): the decimal that holds both, never a
  // double. (An unconstrained numeric holds any value already: its values are cast as they are.)
  const bounded = (type: string) => Number.isFinite(exactDigits(type)?.integer ?? Infinity);
  const floats = source.filter((c) => !fixed.has(c.name) && isFloat(d, c.type) && bounded(model.source.find((m) => m.name === c.name)!.type));
  for (const c of floats)
    if (flow.columnTypes[c.name] !== undefined) {
      const stored = model.source.find((m) => m.name === c.name)!.type;
      throw new ScdError(
        'SCHEMA_CHANGE',
        `column "${c.name}" is stored as ${stored}, and a declared ${flow.columnTypes[c.name]} would round its committed values (a binary float cannot hold every one)`,
        {
          file: flow.origin,
          field: `columnTypes.${c.name}`,
          fix: `declare a decimal that holds them, e.g. decimal(38,${MAX_PRECISION - Math.max(19, exactDigits(stored)!.integer)}), or remove the declaration`,
        },
      );
    }
  const digits = await numberDigits(
    driver,
    TMP.stage,
    floats.map((c) => ({ name: c.name, staged: stagedAs.get(c.name) ?? { type: c.type } })),
  );
  const exact = new Map(floats.map((c) => [c.name, exactDecimal(d, c.name, digits.get(c.name)!, model.source.find((m) => m.name === c.name)!.type, flow.origin)]));
  for (const input of source) {
    const c = exact.has(input.name) ? { ...input, type: exact.get(input.name)! } : input;
    const stored = model.source.find((m) => m.name === c.name)!;
    if (d.sameType(stored.type, c.type) || d.widens(c.type, stored.type) || d.sameType(stored.type, d.types.json)) continue;
    if (!fixed.has(c.name) && d.widens(stored.type, c.type)) {
      const inTarget = targetColumns(flow, model, d).some((t) => t.name === c.name);
      const tables = [names.events, ...(inTarget ? withTargetColumns : [])];
      if (inTarget) await driver.run(`DROP VIEW IF EXISTS ${q(names.current)}`);
      for (const t of tables) await driver.run(`ALTER TABLE ${q(t)} ALTER COLUMN ${q(c.name)} TYPE ${c.type}`);
      const widen = (cols: ColumnInfo[]) => cols.map((m) => (m.name === c.name ? { ...m, type: c.type } : m));
      model = { ...model, source: widen(model.source), payload: widen(model.payload) };
      changed = true;
      rehash ||= model.payload.some((p) => p.name === c.name);
      continue;
    }
    const { expr } = castStaged(d, q(c.name), stagedAs.get(c.name) ?? { type: c.type }, stored.type, flow.timeZone);
    const row = (await driver.query(`SELECT CAST(count(${q(c.name)}) AS INTEGER) AS n, CAST(count(${expr}) AS INTEGER) AS fit FROM ${q(TMP.stage)}`))[0]!;
    if (Number(row.n) > 0 && Number(row.fit) === 0)
      throw new ScdError('SCHEMA_CHANGE', `column "${c.name}" changed type from ${stored.type} to ${c.type}, and none of its values fits ${stored.type}`, {
        file: flow.origin,
        fix: `cast it to ${stored.type} in the source (a narrowing change is never applied), or build a new target`,
      });
  }
  if (rehash)
    // An event's hash is of its payload as typed: a record delivered again after the widening is
    // then a duplicate of its logged event, not a new one at the same sequence (a tie). Truncates
    // keep theirs (a compacted log keeps a truncate's hash without its payload).
    await driver.run(`UPDATE ${q(names.events)} SET ${q(HASH)} = ${d.rowHash(model.payload.map((p) => q(p.name)))} WHERE ${q(OP)} <> ${OP_TRUNCATE}`);
  if (changed) {
    await driver.run(currentViewSql(flow, model, d, names));
    await executorFor(d).writeFlowRecord(driver, names, { ...record, model }, at);
  }
  return model;
}

/**
 * Add `columns` to `table`, each unless the table has it already: on an engine without
 * transactions each ALTER is a commit of its own, and a commit interrupted between two of them
 * left some columns added and its flow record without them; applied again, it adds the rest.
 */
async function addColumns(driver: Driver, table: string, columns: readonly ColumnInfo[]): Promise<void> {
  if (!columns.length) return;
  const q = driver.dialect.quote;
  const has = new Set(((await driver.columns(table)) ?? []).map((c) => driver.dialect.nameKey(c.name)));
  for (const c of columns) if (!has.has(driver.dialect.nameKey(c.name))) await driver.run(`ALTER TABLE ${q(table)} ADD COLUMN ${q(c.name)} ${c.type}`);
}

/** A binary floating-point type (DOUBLE, REAL, FLOAT). */
function isFloat(d: Dialect, type: string): boolean {
  return d.sameType(type, d.types.double) || /^(real|float4?|float8|double precision)$/i.test(type.trim());
}
