/**
 * What a flow file holds, and what defineFlow takes: an interface written out, so that its JSDoc
 * survives into dist/*.d.ts and an editor shows what each field means (a type inferred from the
 * zod schema loses its comments in the emitted declarations). schema.ts checks at compile time
 * that these types and the schema's inferred input are assignable both ways: they cannot drift.
 */

/** Where records come from: one of `path`, `table` or `query`. */
export interface SourceInput {
  /** A file or a landing folder (each file applied exactly once), relative to the flow file. */
  path?: string;
  /** ndjson | json | csv | parquet | debezium; default: from each file's extension. */
  format?: 'ndjson' | 'json' | 'csv' | 'parquet' | 'debezium';
  /** changes (default): each record is a change; snapshot: each file is a full image of the source. */
  mode?: 'changes' | 'snapshot';
  /** snapshot mode: the column holding the snapshot version (default: the number in the file name). */
  versionColumn?: string;
  /** A table of the same database to read changes from. */
  table?: string;
  /**
   * A query of the same database to read changes from. It runs as written, with every right of
   * the database user: for trusted flows only, so it needs `trusted: true`.
   */
  query?: string;
  /** `query` runs as written: whoever writes this flow file may run any SQL on the database. */
  trusted?: boolean;
  /** table/query: a column that grows; only rows above the last applied value are read. */
  watermark?: string;
}

/** A data quality rule, like a Databricks expectation. */
export interface ExpectationInput {
  /** A SQL boolean expression over the source columns; a record fails when it is not true. */
  sql: string;
  /** warn (default): count it; drop: leave the record out (counted); quarantine: set it aside with its reason; fail: refuse the whole commit. */
  action?: 'warn' | 'drop' | 'quarantine' | 'fail';
}

/**
 * A flow (docs/FLOWS.md). The names Databricks (`create_auto_cdc_flow`, `APPLY CHANGES`) and dbt
 * snapshots use for the same things are refused with the field to use instead (foreign-names.ts).
 */
export interface FlowInput {
  /** A name for messages (default: the target). */
  name?: string;
  /** The table to maintain: letters, digits and _, not starting with _scd_ (scdkit's own tables). */
  target: string;
  /** The column, or list of columns, that identifies a record (Databricks `keys`, dbt `unique_key`). */
  keys: string | string[];
  /**
   * What orders the events of one key: a column, or a list compared part by part (`[ts_ms, lsn]`);
   * or `{ processingTime: true }`: each commit's time (arrival order taken as the order of truth);
   * `{ processingTime: date }`: each commit's date in the flow's `timeZone` (`current_date`);
   * `column: effective_date`: the source column that holds it, whose value a record keeps when it
   * has one (a dated initial load, then processing-time batches).
   * Databricks `sequence_by`, dbt `updated_at`. Implied for Debezium and snapshot sources.
   */
  sequenceBy?: string | string[] | { processingTime: true | 'timestamp' | 'date'; column?: string };
  /** A SQL boolean over the source record: true makes it a delete (Databricks `apply_as_deletes`). */
  applyAsDeletes?: string;
  /** A SQL boolean over the source record: true makes it a truncate, which closes every live version. */
  applyAsTruncates?: string;
  /** Exactly these output columns (keys are always kept). Not with exceptColumns. */
  columns?: string | string[];
  /** Every source column but these (Databricks `except_column_list`). Not with columns. */
  exceptColumns?: string | string[];
  /** scd2 (default): every version, with its validity interval; scd1: the latest state of each key. */
  storedAs?: 'scd2' | 'scd1';
  /** Only a change in these columns opens a version; the others are updated in place (type 6 with previousValues). */
  trackHistory?: string | string[];
  /** A change in any column but these opens a version; these are updated in place. */
  trackHistoryExcept?: string | string[];
  /** true: a null in an upsert means "no change" (the column keeps its value). Default false: it writes null. */
  ignoreNullUpdates?: boolean;
  /**
   * SCD type 3 beside type 2: `{ city: previous_city }` adds the column previous_city, holding on
   * each version the city of the key's previous version (null on its first version and after a
   * delete). scd2 targets only.
   */
  previousValues?: Record<string, string>;
  /** DuckDB file, ':memory:', postgres://…, pglite://DIR; relative to the flow file (default scd.duckdb). */
  database?: string;
  /** PostgreSQL: the schema the target and scdkit's tables live in (default public); Spark: the database (default `default`). */
  schema?: string;
  /** Where records come from: a landing folder or file, Debezium envelopes, snapshots, or a table/query. */
  source?: SourceInput;
  /** Data quality rules, like Databricks expectations, by name (letters, digits and _). */
  expect?: Record<string, ExpectationInput>;
  /** Types that always win over inference: a value that does not fit its declared type is quarantined. */
  columnTypes?: Record<string, string>;
  /** The zone a timestamp without an offset is read in (an IANA name; default UTC). */
  timeZone?: string;
  /** none (default): a new source column is refused; add-columns: it is added to the target. */
  schemaEvolution?: 'none' | 'add-columns';
  /** Name of the column where a version starts (default __START_AT; dbt `dbt_valid_from`). */
  startAtColumn?: string;
  /** Name of the column where a version ends, excluded (default __END_AT; dbt `dbt_valid_to`). */
  endAtColumn?: string;
  /** Written instead of null in the end column of current versions (e.g. "9999-12-31"; dbt `dbt_valid_to_current`). */
  endSentinel?: string | number;
  /** Adds a boolean column of this name, true on each key's current version. */
  isCurrentColumn?: string;
  /**
   * The current flag's two values, current first (`[Y, N]`): the column is then text holding
   * them, instead of a boolean. Needs isCurrentColumn.
   */
  isCurrentValues?: [string, string];
  /**
   * The end column holds the last value a version is valid for: the next version's start less one
   * day (a date sequence) or less one (an integer sequence), as in `end_date = next start - 1`.
   * Default false: the end is the next version's start, excluded.
   */
  endInclusive?: boolean;
  /** Adds a column of this name identifying each version: an md5 of key and start, stable across replays. */
  surrogateKey?: string;
  /** close (default): a delete ends the live version; tombstone: it also opens a version marked deleted (dbt `hard_deletes: new_record`). */
  deletes?: 'close' | 'tombstone';
  /** Name of the tombstone flag column (default __DELETED). */
  deletedColumn?: string;
}
