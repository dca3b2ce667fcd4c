import path from 'node:path';
import type { Expectation, SourceSpec } from './schema.js';

export type StoredAs = 'scd2' | 'scd1';

/** A validated flow: every default applied, every path absolute. */
export interface Flow {
  name: string;
  target: string;
  keys: string[];
  /**
   * Sequence columns, compared left to right. 'debezium': a Debezium source without sequenceBy,
   * whose records decide it when its target is created (sources/debezium-positions.ts).
   */
  sequenceBy: string[] | 'debezium';
  applyAsDeletes?: string;
  applyAsTruncates?: string;
  columns?: string[];
  exceptColumns?: string[];
  storedAs: StoredAs;
  trackHistory?: string[];
  trackHistoryExcept?: string[];
  ignoreNullUpdates: boolean;
  /** Absolute DuckDB file path, ':memory:', or a URL (postgres://…, pglite://…). */
  database: string;
  /** The flow names no database (then SCD_DATABASE_URL, when set, is used). */
  databaseIsDefault: boolean;
  /** PostgreSQL: the schema of the target and scdkit's tables. */
  schema: string;
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
  surrogateKey?: string;
  deletes: 'close' | 'tombstone';
  deletedColumn: string;
  /** Where the flow came from (a file path, or "defineFlow"), for messages. */
  origin: string;
  /** Folder that relative paths of the flow resolve against. */
  baseDir: string;
}

export const DEFAULT_DATABASE = 'scd.duckdb';

export function resolveAgainst(baseDir: string, p: string): string {
  if (p === ':memory:' || /^[a-z]+:\/\//i.test(p)) return p;
  return path.resolve(baseDir, p);
}
