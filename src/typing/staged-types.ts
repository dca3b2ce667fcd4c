import { exactDigits } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN, RAW_COLUMN } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { StagedColumn } from './cast.js';
import { declaredType } from './declared.js';
import { exactDecimal, numberDigits } from './exact-numbers.js';
import { inferTypes, type UntypedColumn } from './infer.js';
import type { LexicalColumns } from './lexical.js';

/**
 * What typing reads of a flow (flow/flow.ts Flow has all of it): the types it declares, its keys
 * and sequence, and where it came from, for messages.
 */
export interface TypingFlow {
  columnTypes: Record<string, string>;
  keys: string[];
  sequenceBy: string[] | 'debezium';
  origin: string;
}

/** The staged records' source columns, typed, and how each is held in the staged table. */
export interface TypedStage {
  /** Source columns with the types their values are read as (what the model is made of). */
  columns: ColumnInfo[];
  /** How each source column is staged (the cast's input). */
  staged: Map<string, StagedColumn>;
}

/** The staged table's source columns: scdkit's own (file, line, raw text) left out. */
export function sourceColumnsOf(staged: ColumnInfo[]): ColumnInfo[] {
  return staged.filter((c) => !STAGING_COLUMNS.has(c.name));
}

/** scdkit's own columns of a staged table (file, line, raw text), in the table's order. */
export function stagingColumnsOf(staged: ColumnInfo[]): ColumnInfo[] {
  return staged.filter((c) => STAGING_COLUMNS.has(c.name));
}

const STAGING_COLUMNS = new Set([FILE_COLUMN, LINE_COLUMN, RAW_COLUMN]);

/**
 * The type each staged source column is read as (docs/TYPES.md):
 * 1. a type the flow declares (`columnTypes`) always wins;
 * 2. on an existing target, the stored type, unless this input's values propose a widening
 *    (`stored`: the stored types; only widenable ones are looked at);
 * 3. otherwise what the good values say (typing/infer.ts), over every file of the commit; a
 *    column whose values are really mixed stops the apply before anything changes.
 * Columns a reader typed itself (Parquet, tables) keep that type.
 */
export async function typeStagedColumns(
  driver: Driver,
  flow: TypingFlow,
  table: string,
  stagedColumns: ColumnInfo[],
  lexical: LexicalColumns,
  stored?: ColumnInfo[],
): Promise<TypedStage> {
  const d = driver.dialect;
  const source = sourceColumnsOf(stagedColumns);
  const staged = new Map(source.map((c) => [c.name, { type: c.type, lexical: lexical.get(c.name) } as StagedColumn]));
  const declared = new Map(Object.entries(flow.columnTypes).map(([name, t]) => [name, declaredType(d, t)]));
  const fixed = new Set([...flow.keys, ...flow.sequenceBy]);
  const storedType = new Map((stored ?? []).map((c) => [c.name, c.type]));
  const untyped: UntypedColumn[] = [];
  for (const c of source) {
    const form = lexical.get(c.name);
    if (!form || declared.has(c.name)) continue;
    const was = storedType.get(c.name);
    // A stored key or sequence never widens; a stored type that nothing is wider than needs no look.
    if (was !== undefined && (fixed.has(c.name) || !mayWiden(d, was))) continue;
    untyped.push({ name: c.name, lexical: form, isSequence: flow.sequenceBy.includes(c.name) });
  }
  const inferred = await inferTypes(driver, table, untyped);
  const decided = new Map([...inferred].map(([name, i]) => [name, i.decision]));
  // A new column's cast may rely on the classes its values were seen to have: a row staged after
  // this count (a snapshot's implied delete, sources/snapshot.ts) holds values of stored columns
  // only (its keys and version), null in every new one.
  for (const [name, i] of inferred) if (!storedType.has(name)) staged.set(name, { ...staged.get(name)!, classes: i.classes });
  // Integers with fractions in a fresh column: their digits decide (exact-numbers.ts). A stored
  // column is given a double here, and evolve.ts finds the decimal that holds it and them.
  const mixed = untyped.filter((c) => decided.get(c.name)?.kind === 'integersAndFractions' && !storedType.has(c.name));
  const digits = await numberDigits(
    driver,
    table,
    mixed.map((c) => ({ name: c.name, staged: staged.get(c.name)! })),
  );
  for (const c of mixed) {
    const need = digits.get(c.name)!;
    decided.set(c.name, { kind: 'typed', type: need.beyondDouble ? exactDecimal(d, c.name, need, undefined, flow.origin) : d.types.double });
  }
  const columns = source.map((c): ColumnInfo => {
    const declaredAs = declared.get(c.name);
    if (declaredAs) return { name: c.name, type: declaredAs };
    if (!lexical.has(c.name)) return c;
    const was = storedType.get(c.name);
    const decision = decided.get(c.name);
    if (was !== undefined) return { name: c.name, type: decision?.kind === 'typed' ? decision.type : decision?.kind === 'integersAndFractions' ? d.types.double : was };
    if (!decision) throw new Error(`no type decided for staged column ${c.name}`);
    if (decision.kind === 'integersAndFractions') throw new Error(`column ${c.name}: its digits were not counted`);
    if (decision.kind === 'mixed')
      throw new ScdError('SOURCE_INVALID', `column "${c.name}" holds values of different kinds (e.g. ${samples(decision.samples)}): none is most of them`, {
        file: flow.origin,
        fix: `declare its type in the flow, e.g. columnTypes: { ${c.name}: string }; values that do not fit it are quarantined`,
      });
    if (decision.kind === 'textSequence')
      throw new ScdError('SOURCE_INVALID', `sequence column "${c.name}" holds text and numbers or times (e.g. ${samples(decision.samples)}), so it cannot be ordered as either`, {
        file: flow.origin,
        field: 'sequenceBy',
        fix: `declare how to order it, e.g. columnTypes: { ${c.name}: timestamp } (or bigint, or string to order it as text)`,
      });
    return { name: c.name, type: decision.type };
  });
  return { columns, staged };
}

/** The samples as infer.ts spells them (a JSON string in quotes, a JSON number bare). */
function samples(values: string[]): string {
  return values.join(' and ');
}

/** Whether a stored type has a wider one that an input may propose (integers, decimals, dates). */
function mayWiden(d: Driver['dialect'], type: string): boolean {
  return exactDigits(type) !== undefined || [d.types.smallint, d.types.int, d.types.bigint, d.types.date].some((t) => d.sameType(t, type));
}
