import type { Driver } from '../../../src/index.js';
import { recordDuckDB, replayDuckDB } from './duckdb-tape.js';
import type { FixtureRecorder, FixtureTape } from './fixture.js';
import { recordPostgres, replayPostgres } from './postgres-tape.js';
import { recordSpark, replaySpark } from './spark-tape.js';

export type GoldenDialect = 'duckdb' | 'postgres' | 'spark';

/**
 * A driver of `dialect` that needs no database: the dialect's real driver, whose connection
 * answers every statement from `tape` (a fixture recorded once from the engine, recordingDriver).
 * It stands for a driver just opened: a fresh in-memory DuckDB database, a PostgreSQL schema, a
 * Spark database (named as statementText names a test's fresh schema).
 */
export function replayingDriver(dialect: GoldenDialect, tape: FixtureTape): Driver {
  if (dialect === 'duckdb') return replayDuckDB(tape);
  if (dialect === 'postgres') return replayPostgres(tape, 'scd_golden');
  return replaySpark(tape, 'scd_golden', 'sc://replayed');
}

/** Record what a real, just opened `driver` of `dialect` sends from now on, and what its engine answers. */
export function recordingDriver(dialect: GoldenDialect, driver: Driver): FixtureRecorder {
  if (dialect === 'duckdb') return recordDuckDB(driver);
  if (dialect === 'postgres') return recordPostgres(driver);
  return recordSpark(driver);
}
