import { z } from 'zod';
import { DECLARED_TYPE, DECLARED_TYPE_NAMES } from '../typing/declared.js';

/** A column name as written in a flow. */
const column = z.string().min(1, 'a column name cannot be empty');
const columnList = z.array(column).min(1, 'give at least one column');
const columnOrList = z.union([column, columnList]);

export const sourceSchema = z
  .object({
    /** A file or a landing folder, relative to the flow file. */
    path: z.string().min(1).optional(),
    /** ndjson | json | csv | parquet | debezium; default: from each file's extension. */
    format: z.enum(['ndjson', 'json', 'csv', 'parquet', 'debezium']).optional(),
    /** changes (default): each record is a change; snapshot: each file is a full image of the source. */
    mode: z.enum(['changes', 'snapshot']).default('changes'),
    /** snapshot mode: the column holding the snapshot version (default: the number in the file name). */
    versionColumn: z.string().min(1).optional(),
    /** A table of the same database to read changes from. */
    table: z.string().min(1).optional(),
    /** A query of the same database to read changes from. */
    query: z.string().min(1).optional(),
    /** table/query: a column that grows; only rows above the last applied value are read. */
    watermark: z.string().min(1).optional(),
  })
  .strict();

export const expectationSchema = z
  .object({
    /** A SQL boolean expression over the source columns; a record fails when it is not true. */
    sql: z.string().min(1),
    action: z.enum(['warn', 'drop', 'quarantine', 'fail']).default('warn'),
  })
  .strict();

export const flowSchema = z
  .object({
    name: z.string().min(1).optional(),
    target: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain table name)'),
    keys: z.union([column, columnList]),
    sequenceBy: columnOrList.optional(),
    applyAsDeletes: z.string().min(1).optional(),
    applyAsTruncates: z.string().min(1).optional(),
    columns: columnList.optional(),
    exceptColumns: columnList.optional(),
    storedAs: z.enum(['scd2', 'scd1']).default('scd2'),
    trackHistory: columnList.optional(),
    trackHistoryExcept: columnList.optional(),
    ignoreNullUpdates: z.boolean().default(false),
    database: z.string().min(1).optional(),
    /** PostgreSQL: the schema the target and scdkit's tables live in. */
    schema: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain schema name)')
      .default('public'),
    source: sourceSchema.optional(),
    /** Data quality rules, like Databricks expectations. */
    expect: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'name expectations with letters, digits and _'), expectationSchema).optional(),
    /** Types that always win over inference: a value that does not fit its declared type is quarantined. */
    columnTypes: z.record(column, z.string().regex(DECLARED_TYPE, `use one of ${DECLARED_TYPE_NAMES}`)).optional(),
    /** The zone a timestamp without an offset is read in (an IANA name; default UTC). */
    timeZone: z.string().min(1).default('UTC'),
    /** none (default): a new source column is refused; add-columns: it is added to the target. */
    schemaEvolution: z.enum(['none', 'add-columns']).default('none'),
    // Output options (SEMANTICS §4)
    startAtColumn: column.default('__START_AT'),
    endAtColumn: column.default('__END_AT'),
    endSentinel: z.union([z.string(), z.number()]).optional(),
    isCurrentColumn: column.optional(),
    surrogateKey: column.optional(),
    deletes: z.enum(['close', 'tombstone']).default('close'),
    deletedColumn: column.default('__DELETED'),
  })
  .strict();

export type FlowInput = z.input<typeof flowSchema>;
export type SourceSpec = z.output<typeof sourceSchema>;
export type Expectation = z.output<typeof expectationSchema>;
