/**
 * Failing a Spark commit right after one of its writes (the write is done, the client fails): the
 * crash tests of applies (spark-crash.suite.ts), rebuilds and compactions (spark-rebuild.suite.ts).
 */
import { expect } from 'vitest';
import type { Driver } from '../../src/index.js';

/** A write to a stored table (scratch on Spark is CACHE TABLE / CREATE TEMP VIEW, never these); the lease table is not the commit's. */
const isWrite = (sql: string) => /^\s*(INSERT|MERGE|DELETE|UPDATE|CREATE TABLE|ALTER TABLE)\b/i.test(sql) && !/_scd_locks/.test(sql);

/** From now on, the driver's client fails once, right after its `k`-th write (the write is done). */
function failAfterWrite(driver: Driver, k: number): { failed: () => string | undefined } {
  const target = driver as unknown as { run: (sql: string, params?: unknown[]) => Promise<void> };
  const original = target.run.bind(driver);
  let writes = 0;
  let failedAfter: string | undefined;
  target.run = async (sql, params) => {
    await original(sql, params);
    if (failedAfter === undefined && isWrite(sql) && ++writes === k) {
      failedAfter = sql;
      throw new Error(`simulated failure after write ${k}`);
    }
  };
  return { failed: () => failedAfter };
}

/**
 * One attempt of `apply` whose client fails right after its `k`-th write: the write it failed
 * after (with that failure, nothing else), or undefined when the attempt had no k-th write and
 * succeeded.
 */
export async function failsAfterWrite(driver: Driver, k: number, apply: () => Promise<unknown>): Promise<string | undefined> {
  const { run } = driver as unknown as { run: Driver['run'] };
  const probe = failAfterWrite(driver, k);
  let error: unknown;
  try {
    await apply();
  } catch (e) {
    error = e;
  } finally {
    (driver as unknown as { run: Driver['run'] }).run = run;
  }
  const failedAfter = probe.failed();
  if (failedAfter === undefined) {
    if (error) throw error;
    return undefined;
  }
  expect(String(error)).toContain(`simulated failure after write ${k}`);
  return failedAfter;
}
