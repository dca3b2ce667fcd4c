import path from 'node:path';
import { isUrl } from '../files/object-store.js';
import type { Expectation, SourceSpec } from './schema.js';

export type StoredAs = 'scd2' | 'scd1';

/** A validated flow: every default applied, every path absolute. */
export interface Flow {
  name: string;
  target: string;
  keys: string[];
  /**
   * Sequence columns, compared left to right. 'debezium': a Debezium source without sequenceBy,
   * whose records decide it when its target is created (flow/debezium-positions.ts).
   */
  sequenceBy: string[] | 'debezium';
  /**
   * `sequenceBy: { processingTime: true }`: sequenceBy is [PROCESSING_TIME_COLUMN], a column each
   * commit adds to its records, holding the commit's time (sources/processing-time.ts).
   */
  processingTime: boolean;
  /** A processing-time flow's grain: the commit's instant (a timestamp with time zone) or its date in `timeZone`. */
  processingGrain: 'timestamp' | 'date';
  /**
   * The column a processing-time flow's sequence is in: PROCESSING_TIME_COLUMN, added to every
   * record; or a source column (`sequenceBy.column`), stamped only where a record has no value.
   */
  processingColumn: string;
  applyAsDeletes?: string;
  applyAsTruncates?: string;
  columns?: string[];
  exceptColumns?: string[];
  storedAs: StoredAs;
  trackHistory?: string[];
  trackHistoryExcept?: string[];
  ignoreNullUpdates: boolean;
  /**
   * SCD type 3 beside type 2: payload column → the added column holding that column's value on
   * the key's previous version (the target row that ends where this one starts; null when none).
   */
  previousValues?: Record<string, string>;
  /** Absolute DuckDB file path, ':memory:', or a URL (postgres://…, pglite://…). */
  database: string;
  /** The flow names no database (then SCD_DATABASE_URL, when set, is used). */
  databaseIsDefault: boolean;
  /** Where the target and scdkit's tables live: a PostgreSQL schema (default public), a Spark database (default `default`). */
  schema?: string;
  source?: SourceSpec;
  expect: Record<string, Expectation>;
  schemaEvolution: 'none' | 'add-columns';
  /** Declared column types (names as written in the flow: string, bigint, timestamp, ...). */
  columnTypes: Record<string, string>;
  /** The zone timestamps without an offset are read in. */
  timeZone: string;
  startAtColumn: string;
  endAtColumn: string;
  endSentinel?: string | number;
  isCurrentColumn?: string;
  /** The current flag's values as text, current first; undefined: a boolean (true on the current version). */
  isCurrentValues?: [string, string];
  /** The end column holds the next start less one unit (a day, or 1): the last value the version is valid for. */
  endInclusive: boolean;
  surrogateKey?: string;
  deletes: 'close' | 'tombstone';
  deletedColumn: string;
  /** Where the flow came from (a file path, or "defineFlow"), for messages. */
  origin: string;
  /** Folder that relative paths of the flow resolve against. */
  baseDir: string;
}

export const DEFAULT_DATABASE = 'scd.duckdb';

/** The column a processing-time flow's commits stamp their records with (its sequence). */
export const PROCESSING_TIME_COLUMN = '_processed_at';

/** A path of the flow against its folder; a URL (a scheme and `://`: `sc://`, `s3://`, `postgres://`) as written. */
export function resolveAgainst(baseDir: string, p: string): string {
  if (p === ':memory:' || isUrl(p)) return p;
  return path.resolve(baseDir, p);
}
