import { z } from 'zod';
import { DECLARED_TYPE, DECLARED_TYPE_NAMES } from '../typing/declared.js';

/** A column name as written in a flow. */
const column = z.string().min(1, 'a column name cannot be empty');
const columnList = z.array(column).min(1, 'give at least one column');

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

/** `sequenceBy: { processingTime: true }`: each commit's time is its events' sequence. */
export const processingTimeSchema = z.object({ processingTime: z.literal(true) }).strict();

/**
 * A flow (docs/FLOWS.md). Each field's comment is what an editor shows on hover; the names
 * Databricks (`create_auto_cdc_flow`, `APPLY CHANGES`) and dbt snapshots use for the same things
 * are refused with the field to use instead (foreign-names.ts).
 */
export const flowSchema = z
  .object({
    /** A name for messages (default: the target). */
    name: z.string().min(1).optional(),
    /** The table to maintain: letters, digits and _, not starting with _scd_ (scdkit's own tables). */
    target: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain table name)'),
    /** The column, or list of columns, that identifies a record (Databricks `keys`, dbt `unique_key`). */
    keys: z.union([column, columnList]),
    /**
     * What orders the events of one key: a column, or a list compared part by part (`[ts_ms, lsn]`);
     * or `{ processingTime: true }`: each commit's time (arrival order taken as the order of truth).
     * Databricks `sequence_by`, dbt `updated_at`. Implied for Debezium and snapshot sources.
     */
    sequenceBy: z.union([column, columnList, processingTimeSchema]).optional(),
    /** A SQL boolean over the source record: true makes it a delete (Databricks `apply_as_deletes`). */
    applyAsDeletes: z.string().min(1).optional(),
    /** A SQL boolean over the source record: true makes it a truncate, which closes every live version. */
    applyAsTruncates: z.string().min(1).optional(),
    /** Exactly these output columns (keys are always kept). Not with exceptColumns. */
    columns: columnList.optional(),
    /** Every source column but these (Databricks `except_column_list`). Not with columns. */
    exceptColumns: columnList.optional(),
    /** scd2 (default): every version, with its validity interval; scd1: the latest state of each key. */
    storedAs: z.enum(['scd2', 'scd1']).default('scd2'),
    /** Only a change in these columns opens a version; the others are updated in place (type 6 with previousValues). */
    trackHistory: columnList.optional(),
    /** A change in any column but these opens a version; these are updated in place. */
    trackHistoryExcept: columnList.optional(),
    /** true: a null in an upsert means "no change" (the column keeps its value). Default false: it writes null. */
    ignoreNullUpdates: z.boolean().default(false),
    /**
     * SCD type 3 beside type 2: `{ city: previous_city }` adds the column previous_city, holding on
     * each version the city of the key's previous version (null on its first version and after a
     * delete). scd2 targets only.
     */
    previousValues: z.record(column, column).optional(),
    /** DuckDB file, ':memory:', postgres://…, pglite://DIR; relative to the flow file (default scd.duckdb). */
    database: z.string().min(1).optional(),
    /** PostgreSQL: the schema the target and scdkit's tables live in (default public); Spark: the database (default `default`). */
    schema: z
      .string()
      .min(1)
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'use letters, digits and _ only (a plain schema name)')
      .optional(),
    /** Where records come from: a landing folder or file, Debezium envelopes, snapshots, or a table/query. */
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
    /** Name of the column where a version starts (default __START_AT; dbt `dbt_valid_from`). */
    startAtColumn: column.default('__START_AT'),
    /** Name of the column where a version ends, excluded (default __END_AT; dbt `dbt_valid_to`). */
    endAtColumn: column.default('__END_AT'),
    /** Written instead of null in the end column of current versions (e.g. "9999-12-31"; dbt `dbt_valid_to_current`). */
    endSentinel: z.union([z.string(), z.number()]).optional(),
    /** Adds a boolean column of this name, true on each key's current version. */
    isCurrentColumn: column.optional(),
    /** Adds a column of this name identifying each version: an md5 of key and start, stable across replays. */
    surrogateKey: column.optional(),
    /** close (default): a delete ends the live version; tombstone: it also opens a version marked deleted (dbt `hard_deletes: new_record`). */
    deletes: z.enum(['close', 'tombstone']).default('close'),
    /** Name of the tombstone flag column (default __DELETED). */
    deletedColumn: column.default('__DELETED'),
  })
  .strict();

export type FlowInput = z.input<typeof flowSchema>;
export type SourceSpec = z.output<typeof sourceSchema>;
export type Expectation = z.output<typeof expectationSchema>;
