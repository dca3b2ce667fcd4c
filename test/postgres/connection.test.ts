/**
 * PostgreSQL connections: credentials never appear in messages; the location shows host and
 * database only; SCD_DATABASE_URL is used when the flow names no database; pglite:// works
 * from a flow file; the session's settings.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeLocation } from '../../src/dialects/postgres/postgres-driver.js';
import { databaseOf, defineFlow, openDriver, ScdError } from '../../src/index.js';
import { ndjson, parseNdjson, scd, tempDir } from '../e2e/fixtures/cli.js';
import { engines } from '../engines.js';

const SECRET = 'S3cret-Pa55';

describe('postgres connections', () => {
  it('a refused connection names host and database, never the user or password', async () => {
    const e = await openDriver(`postgres://alice:${SECRET}@127.0.0.1:1/warehouse`).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ScdError);
    const err = e as ScdError;
    expect(err.code).toBe('DB_UNREACHABLE');
    expect(err.message).toContain('postgres://127.0.0.1:1/warehouse');
    expect(err.oneLine()).not.toContain(SECRET);
    expect(err.oneLine()).not.toContain('alice');
  });

  it('the CLI prints one line without the credentials', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: id\nsequenceBy: seq\n');
      writeFileSync(path.join(dir, 'a.ndjson'), ndjson([{ id: 1, seq: 1 }]));
      const r = await scd(['apply', 'flow.yaml', '--db', `postgres://bob:${SECRET}@127.0.0.1:1/db`, '--input', 'a.ndjson'], dir, {
        PGPASSWORD: SECRET,
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('cannot connect to postgres://127.0.0.1:1/db');
      expect(r.stderr + r.stdout).not.toContain(SECRET);
      expect(r.stderr).not.toContain('bob');
    } finally {
      cleanup();
    }
  });

  /** No four characters in a row of the secret appear in the text. */
  const leaks = (text: string, secret: string) => [...Array(Math.max(0, secret.length - 3)).keys()].map((i) => secret.slice(i, i + 4)).filter((w) => text.includes(w));

  // A password with unencoded @, /, #, ?, or a bad port: pg reads part of the password as the host
  // or the database (and printed it), or throws with a stack trace.
  const SECRETS = ['pa@ss/w0rdXYZ', 'pa/ssw0rdXYZ', 'pa#ssw0rdXYZ', 'pa?ssw0rdXYZ', '12/ssw0rdXYZ'];
  const UNREADABLE = [
    ...SECRETS.map((p) => [p, `postgres://plain:${p}@127.0.0.1:55440/postgres`]),
    ['kq8w0rdXYZ', 'postgres://plain:kq8w0rdXYZ@127.0.0.1:99999/postgres'],
    ['kq8w0rdXYZ', 'postgres://plain:kq8w0rdXYZ@127.0.0.1:abc/postgres'],
  ];
  for (const [secret, url] of UNREADABLE)
    it(`an unreadable URL (password ${JSON.stringify(secret.replace(/[^@/#?]/g, '*'))}) is one line that shows none of it and says how to encode it`, async () => {
      const e = await openDriver(url!).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ScdError);
      const line = (e as ScdError).oneLine();
      expect(line).not.toContain('\n');
      expect(leaks(line, secret!)).toEqual([]);
      expect(line).not.toContain('plain');
      expect(line).toContain('@ as %40, / as %2F, # as %23');
      expect(safeLocation(url!)).not.toContain(secret!.slice(0, 4));
    });

  it('the same passwords percent-encoded connect (to a closed port) and are never shown', async () => {
    for (const secret of SECRETS) {
      const url = `postgres://plain:${encodeURIComponent(secret)}@127.0.0.1:55440/postgres`;
      const e = await openDriver(url).catch((x: unknown) => x);
      expect(e, secret).toBeInstanceOf(ScdError);
      const err = e as ScdError;
      expect(err.code).toBe('DB_UNREACHABLE');
      expect(err.message).toContain('cannot connect to postgres://127.0.0.1:55440/postgres');
      expect(leaks(err.oneLine(), secret)).toEqual([]);
      expect(leaks(err.oneLine(), encodeURIComponent(secret))).toEqual([]);
    }
  });

  it('an @ the URL reader can place (no / after it) reads as part of the password, never shown', async () => {
    const e = (await openDriver('postgres://plain:pa@ssw0rdXYZ@127.0.0.1:55440/postgres').catch((x: unknown) => x)) as ScdError;
    expect(e.code).toBe('DB_UNREACHABLE');
    expect(e.message).toContain('postgres://127.0.0.1:55440/postgres');
    expect(leaks(e.oneLine(), 'pa@ssw0rdXYZ')).toEqual([]);
  });

  it('the CLI prints an unreadable URL as one line, no stack trace, none of the password', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: id\nsequenceBy: seq\n');
      writeFileSync(path.join(dir, 'a.ndjson'), ndjson([{ id: 1, seq: 1 }]));
      for (const [secret, url] of UNREADABLE) {
        const r = await scd(['apply', 'flow.yaml', '--db', url!, '--input', 'a.ndjson'], dir);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr.split('\n').filter((l) => l !== '')).toHaveLength(1);
        expect(r.stderr).toContain('%40');
        expect(leaks(r.stderr + r.stdout, secret!)).toEqual([]);
      }
    } finally {
      cleanup();
    }
  });

  it('location: host, port and database, from the URL or the PG* variables', () => {
    expect(safeLocation(`postgresql://u:${SECRET}@db.example:6543/dw?sslmode=require`)).toBe('postgres://db.example:6543/dw');
    expect(safeLocation('postgres:///dw')).toMatch(/^postgres:\/\/[^@]+:\d+\/dw$/);
  });

  it('SCD_DATABASE_URL is the database of a flow that names none', () => {
    const before = process.env.SCD_DATABASE_URL;
    try {
      process.env.SCD_DATABASE_URL = 'postgres://h/dw';
      expect(databaseOf(defineFlow({ target: 't', keys: 'id', sequenceBy: 's' }))).toBe('postgres://h/dw');
      expect(databaseOf(defineFlow({ target: 't', keys: 'id', sequenceBy: 's', database: ':memory:' }))).toBe(':memory:');
      expect(databaseOf(defineFlow({ target: 't', keys: 'id', sequenceBy: 's' }), { database: 'postgres://other/x' })).toBe('postgres://other/x');
    } finally {
      if (before === undefined) delete process.env.SCD_DATABASE_URL;
      else process.env.SCD_DATABASE_URL = before;
    }
  });

  for (const engine of engines.filter((e) => e.name !== 'duckdb'))
    it(`${engine.name}: the session runs in UTC and without JIT compilation (docs/decisions/0059-postgresql-runs-without-jit.md)`, async () => {
      const driver = await engine.open();
      try {
        const [row] = await driver.query(`SELECT current_setting('jit') AS jit, current_setting('TimeZone') AS tz`);
        expect(row).toEqual({ jit: 'off', tz: 'UTC' });
      } finally {
        await driver.close();
      }
    });

  it('a flow on pglite:// applies and exports through the CLI (schema from the flow)', async () => {
    const { dir, cleanup } = tempDir();
    try {
      writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: id\nsequenceBy: seq\nschema: dw\ndatabase: pglite://data\n');
      writeFileSync(
        path.join(dir, 'a.ndjson'),
        ndjson([
          { id: 1, v: 'a', seq: 1 },
          { id: 1, v: 'b', seq: 2 },
        ]),
      );
      const a = await scd(['apply', 'flow.yaml', '--input', 'a.ndjson'], dir);
      expect(a.code, a.stderr).toBe(0);
      const e = await scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
      expect(e.code, e.stderr).toBe(0);
      expect(parseNdjson(e.stdout)).toEqual([
        { id: 1, v: 'a', seq: 1, __START_AT: 1, __END_AT: 2 },
        { id: 1, v: 'b', seq: 2, __START_AT: 2, __END_AT: null },
      ]);
    } finally {
      cleanup();
    }
  }, 120_000);
});
