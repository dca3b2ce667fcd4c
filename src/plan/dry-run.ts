import type { Driver, TransactionOptions } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';

/** One statement a commit sent, with its parameters ($1, $2, ...) where it has some. */
export interface RecordedStatement {
  sql: string;
  params?: unknown[];
}

/** What a dry run found: the statements the commit sent, and the result it would have had. */
export interface DryRun<T> {
  dryRun: true;
  statements: RecordedStatement[];
  result: T;
}

/** Thrown inside the commit's transaction to roll it back, carrying what the commit returned. */
class RolledBack {
  constructor(readonly result: unknown) {}
}

/**
 * Run `work` (one commit) on a driver that records every statement sent through it (run, query,
 * streamText) and whose transaction is always rolled back: the commit runs whole (its reads, its
 * temporary tables, its writes, in order, each depending on what the earlier ones found) and
 * then nothing of its transaction is kept (docs/decisions/0040-a-dry-run-rolls-its-commit-back.md). What runs before the
 * transaction only writes temporary tables (staging), except the catalog tables scdkit creates,
 * empty, in a database that has none.
 *
 * Invariant: one transaction per dry run. A second would be planned against the state the first
 * left, which the dry run did not keep, so it is refused (--each, several snapshots).
 */
export async function dryRun<T>(driver: Driver, work: (driver: Driver) => Promise<T>): Promise<DryRun<T>> {
  // Without transactions (Spark + Delta) the commit's writes would be kept: refused before any.
  if (!executorFor(driver.dialect).guarantees.transactions)
    throw new ScdError('USAGE', `a dry run rolls its commit back, and ${driver.dialect.name} has no transactions to roll back`, {
      fix: 'dry-run the flow on a copy of the data in DuckDB or PostgreSQL',
    });
  const statements: RecordedStatement[] = [];
  const record = (sql: string, params?: unknown[]) => statements.push(params?.length ? { sql, params: [...params] } : { sql });
  let inside = false;
  let rolledBack = false;
  const own: Partial<Driver> = {
    run: (sql, params) => {
      record(sql, params);
      return driver.run(sql, params);
    },
    query: (sql, params) => {
      record(sql, params);
      return driver.query(sql, params);
    },
    streamText: (sql, params, onRow) => {
      record(sql, params);
      return driver.streamText(sql, params, onRow);
    },
    transaction: async <R>(fn: () => Promise<R>, options?: TransactionOptions): Promise<R> => {
      if (inside) return fn();
      if (rolledBack)
        throw new ScdError('USAGE', 'a dry run shows one commit, and this apply would make several (each one planned on what the one before it left)', {
          fix: 'dry-run one commit at a time: without --each, or with --input and one file',
        });
      inside = true;
      try {
        await driver.transaction(async () => {
          throw new RolledBack(await fn());
        }, options);
      } catch (e) {
        if (!(e instanceof RolledBack)) throw e;
        rolledBack = true;
        return e.result as R;
      } finally {
        inside = false;
      }
      throw new Error("unreachable: a dry run's transaction always rolls back");
    },
  };
  // Every other member is the driver's own, called on the driver itself (its statements inside
  // stageFiles, lockTarget, columns, ... are the driver's means, not the commit's, and not recorded).
  const recording = new Proxy(driver, {
    get(target, prop) {
      if (Object.hasOwn(own, prop)) return own[prop as keyof Driver];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const result = await work(recording);
  return { dryRun: true, statements, result };
}

/** A statement as a person reads it: its parameters in a comment above, ended with ';'. */
export function statementText(s: RecordedStatement): string {
  const params = s.params?.length ? `-- ${s.params.map((p, i) => `$${i + 1} = ${literal(p)}`).join(', ')}\n` : '';
  return `${params}${s.sql.trimEnd()};`;
}

function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `'${text.replace(/'/g, "''").replace(/\n/g, '\\n')}'`;
}
