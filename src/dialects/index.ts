import type { Driver } from './driver.js';
import { DuckDBDriver } from './duckdb/index.js';

/** Open the engine a database location names. Only DuckDB files (and ':memory:') for now. */
export async function openDriver(database: string): Promise<Driver> {
  if (/^postgres(ql)?:\/\//i.test(database)) {
    const { ScdError } = await import('../errors.js');
    throw new ScdError('DB_UNREACHABLE', 'PostgreSQL databases are not supported yet', {
      fix: 'use a DuckDB file path for "database"',
    });
  }
  return DuckDBDriver.create(database);
}

export type { Driver, Row, ColumnInfo, InputFile, FileFormat } from './driver.js';
export type { Dialect } from './dialect.js';
export { duckdbDialect } from './duckdb/index.js';
