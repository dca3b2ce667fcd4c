import type { Driver } from '../dialects/driver.js';
import { openDriverWaiting } from '../dialects/open-waiting.js';
import { KeyedMutex } from '../dialects/duckdb/keyed-mutex.js';

/**
 * Where a request's driver comes from. The server reads only, and holds no lock of the target:
 * a request runs SELECTs alone, and never inside a commit's transaction or `lockTarget`.
 */
export interface DriverSource {
  use<T>(fn: (driver: Driver) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A driver per request, closed when the request is answered (DuckDB files, PostgreSQL servers).
 * A DuckDB file is held by one process at a time: between requests the server holds nothing, so
 * `scd apply` (or `--watch`, between its commits) in another process can open it; a request that
 * meets the file held by another process waits for it (up to 5 s) and then answers 503 with
 * "reload in a moment". A commit in another process that opens the file during a request fails
 * with DB_IN_USE as it does against any other reader.
 */
export function driverPerRequest(database: string, options: { schema?: string }): DriverSource {
  return {
    async use(fn) {
      // A file another process holds (an apply in progress) is waited for, up to 5 s.
      const driver = await openDriverWaiting(database, { schema: options.schema });
      try {
        return await fn(driver);
      } finally {
        await driver.close();
      }
    },
    async close() {},
  };
}

/**
 * One driver for the server's life, one request at a time (a PGlite folder is one session per
 * process; tests serve a database they hold). The caller owns the driver unless `owns`.
 */
export function sharedDriver(driver: Driver, owns = false): DriverSource {
  const turns = new KeyedMutex();
  return {
    async use(fn) {
      const release = await turns.acquire('driver');
      try {
        return await fn(driver);
      } finally {
        release();
      }
    },
    async close() {
      if (owns) await driver.close();
    },
  };
}
