/**
 * Flow expressions that try to do more than decide a record (shared by the expression tests and
 * the hostile-flow property), and a snapshot of every table a database holds, to show that a
 * refused apply changed none of them.
 */
import type { Driver } from '../src/index.js';

/**
 * Expressions that break out of the SQL around them into statements of their own: a COMMIT that
 * ends the apply's transaction, then a DROP of the canary table `victim`. Where a SQL string could
 * hold several statements (docs/decisions/0029-every-sql-string-is-one-statement.md), the first
 * ran on DuckDB (DESCRIBE SELECT (expr) AS x FROM ... ran as four statements), the second on a
 * PostgreSQL server (SELECT * FROM (SELECT (expr) AS x ...) _scd_d LIMIT 0 as a simple query).
 */
export const INJECTIONS = [
  `E'\\'' = 'a') AS x; COMMIT; DROP TABLE victim; DESCRIBE SELECT (E'\\'' = 'a'`,
  `E'\\'' = 'a') AS x) _scd_d; COMMIT; DROP TABLE victim; SELECT * FROM (SELECT (E'\\'' = 'a'`,
];

/** Spelled as one engine alone reads them, or hiding part of what they hold: refused by their spelling. */
export const MISSPELT = [
  `op = $$D$$`,
  `op = $q$D$q$`,
  `op = E'D'`,
  `op = e'\\x44'`,
  `op = U&'\\0044'`,
  `U&"op" = 'D'`,
  `op = B'1'`,
  `op = X'44'`,
  `op = N'D'`,
  `op = 'D' -- ; DROP TABLE victim`,
  `op = 'D' /* ; DROP TABLE victim */`,
];

/** More than one expression over the record: each refused by the engine's own check. */
export const OVERREACHING = [
  // separators and parameters
  `op = 'D'; DROP TABLE victim`,
  `op = 'D';`,
  `$1 = 'D'`,
  // subqueries, tables and files
  `(SELECT true)`,
  `op IN (SELECT 'D')`,
  `EXISTS (SELECT 1)`,
  `(SELECT count(*) FROM victim) > 0`,
  `(SELECT count(*) FROM read_text('/etc/passwd')) > 0`,
  `(SELECT count(*) FROM read_csv('/etc/passwd')) > 0`,
  `(SELECT count(*) FROM generate_series(1, 3)) > 0`,
  `generate_series(1, 3) > 0`,
  `pg_read_file('/etc/passwd') <> ''`,
  `length(pg_read_file('/etc/passwd')) > 0`,
  // not a function of the record
  `random() < 2`,
  `current_setting('search_path') <> ''`,
  `getvariable('x') IS NULL`,
  `version() <> ''`,
  `current_user <> ''`,
  `user <> ''`,
  `current_database() <> ''`,
  `tableoid > 0`,
  `count(*) > 0`,
  `row_number() OVER () > 0`,
];

/** Every expression above. */
export const HOSTILE = [...INJECTIONS, ...MISSPELT, ...OVERREACHING];

/**
 * Every table and view of the database's own schema, each with its rows (sorted): equal means
 * unchanged. `unread`: tables listed by name only (their rows not read).
 */
export async function snapshotTables(driver: Driver, unread: (table: string) => boolean = () => false): Promise<Record<string, string[]>> {
  const tables = await driver.query(
    `SELECT table_name AS t FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = current_schema() ORDER BY 1`,
  );
  const out: Record<string, string[]> = {};
  for (const { t } of tables) {
    const name = String(t);
    out[name] = unread(name) ? [] : (await driver.query(`SELECT * FROM ${driver.dialect.quote(name)}`)).map((r) => JSON.stringify(r)).sort();
  }
  return out;
}
