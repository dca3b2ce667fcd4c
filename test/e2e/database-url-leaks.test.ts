/**
 * A database location that looks like a URL but is not one scdkit opens (a mistyped scheme, a
 * JDBC URL, a leading space, the quotes an env file keeps) is refused in one line, exit 1, with
 * its credentials masked, wherever it is given (--db, SCD_DATABASE_URL, the flow's "database"),
 * by every command: the password never reaches stdout or stderr, and no file of that name is made.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFixture, errorLines, type RunResult, scd, tempDir } from './fixtures/cli.js';

const SECRET = 'S3cr3t';

const MALFORMED: Array<[string, string]> = [
  ['a mistyped scheme', `postgre://user:${SECRET}@host/db`],
  ['a doubled letter', `postgress://user:${SECRET}@db.example.com:5432/warehouse`],
  ['pg://', `pg://user:${SECRET}@host/db`],
  ['a JDBC URL', `jdbc:postgresql://host:5432/db?user=etl&password=${SECRET}`],
  ['a leading space', ` postgres://user:${SECRET}@host/db`],
  ['double quotes (an env file keeps them)', `"postgres://user:${SECRET}@host/db"`],
  ['single quotes', `'postgres://user:${SECRET}@host/db'`],
  ['a trailing quote', `postgres://user:${SECRET}@host/db"`],
  ['no scheme', `user:${SECRET}@host/db`],
  ['a password in a setting of an unknown scheme', `mysql://host/db?sslpassword=${SECRET}`],
];

let tmp: { dir: string; cleanup: () => void };
let projects = 0;
beforeAll(() => {
  tmp = tempDir('scdkit-leaks-');
});
afterAll(() => tmp.cleanup());

function project(): string {
  return copyFixture('accounts', path.join(tmp.dir, `p${++projects}`));
}

/** Exit 1, one `scd:` line with a fix, the secret nowhere, and nothing made in the project. */
function refusedMasked(r: RunResult, dir: string, before: string[]): string {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stdout + r.stderr).not.toContain(SECRET);
  const lines = errorLines(r.stderr);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^scd: .*\(fix: .+\)$/);
  expect(r.stderr).not.toMatch(/bug in scdkit|\n\s+at /);
  expect(readdirSync(dir).sort()).toEqual(before);
  return lines[0]!;
}

describe('a database location that looks like a URL is refused, its credentials masked', () => {
  for (const [what, location] of MALFORMED) {
    it(`${what}: --db, status`, async () => {
      const dir = project();
      const before = readdirSync(dir).sort();
      const line = refusedMasked(await scd(['status', 'flow.yaml', '--db', location], dir), dir, before);
      expect(line).toContain('***');
    });

    it(`${what}: --db, apply and export`, async () => {
      const dir = project();
      const before = readdirSync(dir).sort();
      refusedMasked(await scd(['apply', 'flow.yaml', '--db', location], dir), dir, before);
      refusedMasked(await scd(['export', 'flow.yaml', '--db', location, '--format', 'csv'], dir), dir, before);
    });

    it(`${what}: SCD_DATABASE_URL, apply and status`, async () => {
      const dir = project();
      // The flow names no database, so the variable is the one used.
      const flow = path.join(dir, 'flow.yaml');
      writeFileSync(flow, readFileSync(flow, 'utf8').replace(/^database:.*\n/m, ''));
      const before = readdirSync(dir).sort();
      const line = refusedMasked(await scd(['apply', 'flow.yaml'], dir, { SCD_DATABASE_URL: location }), dir, before);
      expect(line).toContain('SCD_DATABASE_URL');
      refusedMasked(await scd(['status', 'flow.yaml'], dir, { SCD_DATABASE_URL: location }), dir, before);
    });

    it(`${what}: the flow's "database", apply and status`, async () => {
      const dir = project();
      const flow = path.join(dir, 'flow.yaml');
      writeFileSync(flow, readFileSync(flow, 'utf8').replace(/^database:.*$/m, `database: ${JSON.stringify(location)}`));
      const before = readdirSync(dir).sort();
      const line = refusedMasked(await scd(['apply', 'flow.yaml'], dir), dir, before);
      expect(line).toContain('field "database"');
      refusedMasked(await scd(['status', 'flow.yaml'], dir), dir, before);
    });
  }

  it('a well-formed URL of a server that does not answer: one line, the password not shown', async () => {
    const dir = project();
    for (const location of [`postgresql://user:${SECRET}@127.0.0.1:1/db`, `postgres://127.0.0.1:1/db?password=${SECRET}`]) {
      const r = await scd(['status', 'flow.yaml', '--db', location], dir);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(errorLines(r.stderr)).toHaveLength(1);
    }
  });

  it('a DuckDB path and a pglite:// folder are still opened', async () => {
    const dir = project();
    expect((await scd(['apply', 'flow.yaml', '--db', 'other.duckdb'], dir)).code).toBe(0);
    expect((await scd(['apply', 'flow.yaml', '--db', `pglite://${path.join(dir, 'pgdata')}`], dir)).code).toBe(0);
    expect((await scd(['status', 'flow.yaml', '--db', 'other.duckdb'], dir)).code).toBe(0);
  });
});
