import type { Driver } from '../dialects/driver.js';
import { KeyedMutex } from '../dialects/duckdb/keyed-mutex.js';
import { openDriverWaiting } from '../dialects/open-waiting.js';

/**
 * Where a request's driver comes from. The server reads only, and holds no lock of the target:
 * a request runs SELECTs alone, and never inside a commit's transaction or `lockTarget`.
 */
export interface DriverSource {
  use<T>(fn: (driver: Driver) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A driver per request, closed when the request is answered (PostgreSQL servers: each request a
 * session of its own, concurrent requests side by side).
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

/** How long the server may hold a DuckDB file while requests keep coming, and how long it then lets go. */
export interface FileTurns {
  holdMs: number;
  /** Longer than two of a waiting opener's tries (openDriverWaiting tries every 100 ms). */
  yieldMs: number;
}
const TURNS: FileTurns = { holdMs: 500, yieldMs: 300 };

/**
 * A DuckDB file, held by one process at a time, shared with writers in other processes: requests
 * take turns on one driver (one at a time), opened when a request comes and closed when none
 * waits. While requests keep coming (requests from several clients, or one client back to back),
 * the server holds the file for at most `holdMs`, then closes it and opens it again only after
 * `yieldMs`: an `scd apply` waiting for the file (it tries every 100 ms) opens it in that gap,
 * and the requests wait for its commit (up to 5 s each, then 503 "reload in a moment").
 */
export function duckdbFile(database: string, options: { schema?: string }, turns: FileTurns = TURNS): DriverSource {
  const mutex = new KeyedMutex();
  let driver: Driver | undefined;
  let waiting = 0;
  /** When the file was last closed, and when the server last took it after a full gap. */
  let closedAt = -Infinity;
  let busySince = 0;
  const close = async () => {
    const d = driver;
    driver = undefined;
    closedAt = Date.now();
    await d?.close();
  };
  return {
    async use(fn) {
      waiting++;
      const release = await mutex.acquire('file');
      waiting--;
      try {
        if (!driver) {
          const gap = Date.now() - closedAt;
          if (gap >= turns.yieldMs) busySince = Date.now();
          else if (Date.now() - busySince >= turns.holdMs) {
            // Held for its share: let a writer in before taking the file again.
            await new Promise((r) => setTimeout(r, turns.yieldMs - gap));
            busySince = Date.now();
          }
          driver = await openDriverWaiting(database, { schema: options.schema });
        }
        return await fn(driver);
      } finally {
        if (waiting === 0 || Date.now() - busySince >= turns.holdMs) await close().catch(() => {});
        release();
      }
    },
    async close() {
      const release = await mutex.acquire('file');
      try {
        await close();
      } finally {
        release();
      }
    },
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
