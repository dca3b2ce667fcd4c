import type { Driver } from '../../src/index.js';

/**
 * The statements a driver sends from now on, as it sends them through run, query and streamText
 * (every statement but a PostgreSQL bulk load's COPY), in order. The array grows as it runs.
 */
export function recordStatements(driver: Driver): string[] {
  const statements: string[] = [];
  const target = driver as unknown as Record<string, (sql: string, ...rest: unknown[]) => Promise<unknown>>;
  for (const method of ['run', 'query', 'streamText']) {
    const original = target[method]!.bind(driver);
    target[method] = (sql: string, ...rest: unknown[]) => {
      statements.push(sql);
      return original(sql, ...rest);
    };
  }
  return statements;
}
