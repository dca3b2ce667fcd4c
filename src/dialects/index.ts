import path from 'node:path';
import { checkDatabaseLocation } from './database-location.js';
import type { Driver } from './driver.js';
import { DuckDBDriver } from './duckdb/index.js';

export interface OpenOptions {
  /** PostgreSQL: the schema the flow's tables live in (default public). */
  schema?: string;
  /** Fail at once, instead of waiting, when another commit (of any process) changes the same target. */
  noWait?: boolean;
}

/**
 * Open the engine a database location names:
 * - `postgres://…` / `postgresql://…`: a PostgreSQL server (13+) through `pg`;
 * - `pglite://memory` (in-memory) or `pglite://PATH` (a data folder): PGlite, in-process PostgreSQL;
 * - anything else: a DuckDB file, or ':memory:'.
 */
export async function openDriver(database: string, options: OpenOptions = {}): Promise<Driver> {
  checkDatabaseLocation(database);
  if (/^postgres(ql)?:\/\//i.test(database)) {
    const { PostgresDriver } = await import('./postgres/index.js');
    return PostgresDriver.connect(database, options);
  }
  if (/^sc:\/\//i.test(database)) {
    const { SparkDriver } = await import('./spark/spark-driver.js');
    return SparkDriver.connect(database, options);
  }
  const lite = /^pglite:\/\/(.*)$/i.exec(database);
  if (lite) {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PostgresDriver } = await import('./postgres/index.js');
    const where = lite[1] === '' || lite[1] === 'memory' ? undefined : path.resolve(lite[1]!);
    const { openPGliteFolder } = await import('./postgres/pglite-folders.js');
    const db = where === undefined ? await PGlite.create() : await openPGliteFolder(where, database, async (dir) => (await PGlite.create(dir)) as never);
    return PostgresDriver.fromPGlite(db as never, { ...options, owns: true, location: database });
  }
  return DuckDBDriver.create(database, { noWait: options.noWait });
}

export type { Dialect } from './dialect.js';
export type { ColumnInfo, Driver, FileFormat, InputFile } from './driver.js';
export { duckdbDialect } from './duckdb/index.js';
export { postgresDialect } from './postgres/postgres-dialect.js';
