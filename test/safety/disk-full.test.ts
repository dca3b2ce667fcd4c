/**
 * The engines' reports of a full disk become one line
 * (docs/decisions/0039-a-full-disk-is-one-line.md): the disk is full, the commit the target is
 * still at, and what to free. The reports are the engines' own, as they arrive: DuckDB's "No space
 * left on device" (while a commit writes, and when its COMMIT cannot write the WAL), PostgreSQL's
 * SQLSTATE 53100 ("could not extend file"). A full disk for real: test/e2e/disk-full.test.ts. Any
 * other error passes through untouched.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, openDriver, QueryError, ScdError } from '../../src/index.js';
import { reportDiskFull } from '../../src/plan/disk-full.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';

/** The errors each engine raises when the disk is full, as its client hands them over. */
function diskFullErrors(driver: Driver): unknown[] {
  if (driver.dialect.name === 'duckdb')
    return [
      new QueryError('INSERT INTO "dim" SELECT 1', [], new Error('IO Error: Could not write file "/data/w.duckdb": No space left on device')),
      new QueryError('COMMIT', [], new Error('TransactionContext Error: Failed to commit: Could not write file "/data/w.duckdb.wal": No space left on device')),
    ];
  const pgError = (message: string) => Object.assign(new Error(message), { code: '53100', severity: 'ERROR' });
  return [
    new QueryError('INSERT INTO "dim" SELECT 1', [], pgError('could not extend file "base/16384/16397": No space left on device')),
    new QueryError('SELECT 1', [], pgError('could not write to file "base/pgsql_tmp/pgsql_tmp1234.0": No space left on device')),
  ];
}

for (const engine of engines) {
  describe(`${engine.name}: a full disk`, () => {
    it('is one line with the commit the target is at and what to free; another error passes as it is', async () => {
      const flow = defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'seq' });
      const driver = await engine.open();
      try {
        const fail = (e: unknown) =>
          reportDiskFull(driver, flow, 'apply', () => Promise.reject(e)).then(
            () => undefined,
            (x: unknown) => x,
          );
        // No commit yet.
        const none = (await fail(diskFullErrors(driver)[0])) as ScdError;
        expect(none).toBeInstanceOf(ScdError);
        expect(none.problem).toBe('the disk is full: nothing of this apply was kept, and target "dim" has no commit yet');
        await applyRows(driver, flow, [{ id: 1, seq: 1 }]);
        await applyRows(driver, flow, [{ id: 1, seq: 2 }]);
        for (const e of diskFullErrors(driver)) {
          const err = (await fail(e)) as ScdError;
          expect(err).toBeInstanceOf(ScdError);
          expect(err.code).toBe('NOT_APPLIED');
          expect(err.problem).toBe('the disk is full: nothing of this apply was kept, and target "dim" is as commit 2 left it');
          expect(err.oneLine()).not.toContain('\n');
          expect(err.oneLine()).not.toMatch(/No space left|Failed to commit|could not extend/);
          expect(err.fix).toMatch(/^free space on the disk of /);
          expect(err.fix).toContain(driver.dialect.name === 'duckdb' ? 'SCD_DUCKDB_TEMP_DIRECTORY' : 'PostgreSQL server');
        }
        const other = new QueryError('SELECT 1', [], Object.assign(new Error('permission denied for table dim'), { code: '42501' }));
        expect(await fail(other)).toBe(other);
        // Node's own ENOSPC (scdkit's temporary files): the same line, the fix names the folder.
        const node = (await fail(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))) as ScdError;
        expect(node.message).toContain('is as commit 2 left it');
        expect(node.fix).toContain('TMPDIR');
      } finally {
        await driver.close();
      }
    });
  });
}

describe('SCD_DUCKDB_TEMP_DIRECTORY', () => {
  it("moves DuckDB's temp directory, named in the fix of a full disk; a folder that cannot be one is one USAGE line", async () => {
    const tmp = tempDir();
    const before = process.env.SCD_DUCKDB_TEMP_DIRECTORY;
    try {
      const spill = path.join(tmp.dir, 'spill');
      process.env.SCD_DUCKDB_TEMP_DIRECTORY = spill;
      const driver = await openDriver(':memory:');
      try {
        expect(await driver.query(`SELECT current_setting('temp_directory') AS t`)).toEqual([{ t: spill }]);
        expect(driver.diskFull(new Error('IO Error: Could not write file: No space left on device'))).toContain(spill);
      } finally {
        await driver.close();
      }
      process.env.SCD_DUCKDB_TEMP_DIRECTORY = '/dev/null/spill';
      const e = await openDriver(':memory:').then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(ScdError);
      expect((e as ScdError).code).toBe('USAGE');
      expect((e as ScdError).oneLine()).toMatch(/^SCD_DUCKDB_TEMP_DIRECTORY=\/dev\/null\/spill is not a folder DuckDB can use: .*\(fix: give a folder/);
    } finally {
      if (before === undefined) delete process.env.SCD_DUCKDB_TEMP_DIRECTORY;
      else process.env.SCD_DUCKDB_TEMP_DIRECTORY = before;
      tmp.cleanup();
    }
  });
});
