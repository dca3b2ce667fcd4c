import type { Driver } from '../../dialects/driver.js';

/** The number a one-value query answers (0 for no row or a null). */
export async function countOf(driver: Driver, sql: string, params: unknown[] = []): Promise<number> {
  return Number(Object.values((await driver.query(sql, params))[0] ?? {})[0] ?? 0);
}
