import { z } from 'zod';
import { DECLARED_TYPE, DECLARED_TYPE_NAMES } from '../typing/declared.js';
import type { ExpectationInput, FlowInput, SourceInput } from './flow-input.js';

/** A column name as written in a flow. */
const column = z.string().min(1, 'a column name cannot be empty');
const columnList = z.array(column).min(1, 'give at least one column');
/** One column name or a list of them: wherever a flow takes a list of names, one name is a list of one. */
const columnNames = z.union([column, columnList]);

export const sourceSchema = z
  .object({
    path: z.string().min(1).optional(),
    format: z.enum(['ndjson', 'json', 'csv', 'parquet', 'debezium']).optional(),
    mode: z.enum(['changes', 'snapshot']).default('changes'),
    versionColumn: z.string().min(1).optional(),
    table: z.string().min(1).optional(),
    query: z.string().min(1).optional(),
    trusted: z.boolean().optional(),
    watermark: z.string().min(1).optional(),
  })
  .strict();

export const expectationSchema = z
  .object({
    sql: z.string().min(1),
    action: z.enum(['warn', 'drop', 'quarantine', 'fail']).default('warn'),
  })
  .strict();

/**
 * `sequenceBy: { processingTime: true }`: each commit's time is its events' sequence; `date`: its
 * date; `column`: the source column holding it, kept where a record carries a value (a dated load).
 */
export const processingTimeSchema = z.object({ processingTime: z.union([z.literal(true), z.enum(['timestamp', 'date'])]), column: column.optional() }).strict();

/**
 * A flow (docs/FLOWS.md). What each field means is written once, on FlowInput (flow-input.ts),
 * whose JSDoc an editor shows; the check below keeps the two the same type.
 */
export const flowSchema = z
  .object({
    name: z.string().min(1).optional(),
    target: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain table name)'),
    keys: columnNames,
    sequenceBy: z.union([columnNames, processingTimeSchema]).optional(),
    applyAsDeletes: z.string().min(1).optional(),
    applyAsTruncates: z.string().min(1).optional(),
    columns: columnNames.optional(),
    exceptColumns: columnNames.optional(),
    storedAs: z.enum(['scd2', 'scd1']).default('scd2'),
    trackHistory: columnNames.optional(),
    trackHistoryExcept: columnNames.optional(),
    ignoreNullUpdates: z.boolean().default(false),
    previousValues: z.record(column, column).optional(),
    database: z.string().min(1).optional(),
    schema: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/, 'use letters, digits and _ only: a plain schema name, or catalog.schema on Spark')
      .optional(),
    source: sourceSchema.optional(),
    expect: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'name expectations with letters, digits and _'), expectationSchema).optional(),
    columnTypes: z.record(column, z.string().regex(DECLARED_TYPE, `use one of ${DECLARED_TYPE_NAMES}`)).optional(),
    timeZone: z.string().min(1).default('UTC'),
    schemaEvolution: z.enum(['none', 'add-columns']).default('none'),
    // Output options (SEMANTICS §4)
    startAtColumn: column.default('__START_AT'),
    endAtColumn: column.default('__END_AT'),
    endSentinel: z.union([z.string(), z.number()]).optional(),
    isCurrentColumn: column.optional(),
    isCurrentValues: z.tuple([z.string(), z.string()]).optional(),
    endInclusive: z.boolean().default(false),
    surrogateKey: column.optional(),
    deletes: z.enum(['close', 'tombstone']).default('close'),
    deletedColumn: column.default('__DELETED'),
  })
  .strict();

export type { ExpectationInput, FlowInput, SourceInput } from './flow-input.js';
/** A source as validated: its defaults applied. */
export type SourceSpec = Omit<SourceInput, 'mode'> & { mode: NonNullable<SourceInput['mode']> };
export type Expectation = z.output<typeof expectationSchema>;

// Compile-time: the written-out types and the schema's own have the same fields and are
// assignable both ways (tsc fails on a field added, removed or retyped in one and not the other).
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Same<A, B> = Mutual<A, B> extends true ? Mutual<keyof A, keyof B> : false;
const sameTypes: [
  Same<FlowInput, z.input<typeof flowSchema>>,
  Same<SourceInput, z.input<typeof sourceSchema>>,
  Same<ExpectationInput, z.input<typeof expectationSchema>>,
  Same<SourceSpec, z.output<typeof sourceSchema>>,
] = [true, true, true, true];
void sameTypes;
