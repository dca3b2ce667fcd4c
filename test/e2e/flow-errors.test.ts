/**
 * Flow mistakes through the CLI: stderr is ONE line naming the file, the field and a fix, and
 * the exit code is non-zero (SEMANTICS §6). Nothing is created in the database.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, ndjson, scd, tablesOf, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
let n = 0;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

function folder(flowText: string): string {
  const dir = path.join(tmp.dir, `case${++n}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'flow.yaml'), flowText);
  writeFileSync(path.join(dir, 'in.ndjson'), ndjson([{ id: 1, ts: 1, op: 'U', v: 'a' }]));
  return dir;
}

describe('flow errors through scd', () => {
  it('an unknown field: exactly one stderr line with file, field and "did you mean"', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequenceBy: ts\nignoreNullUpdate: true\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: flow\.yaml: field "ignoreNullUpdate": .*\(fix: did you mean "ignoreNullUpdates"\?\)$/);
    expect(existsSync(path.join(dir, 'scd.duckdb'))).toBe(false);
  });

  it('a typo in a REQUIRED field names the typo, not only "Invalid input" on the real field', async () => {
    const dir = folder('target: t\nkeyz: [id]\nsequenceBy: ts\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('flow.yaml');
    expect(lines[0]).toContain('keyz');
    expect(lines[0]).toContain('did you mean "keys"');
  });

  it('applyAsDeletes with a second statement: one line, field and fix; table not created', async () => {
    const dir = folder(`target: t\nkeys: [id]\nsequenceBy: ts\napplyAsDeletes: "op = 'D'; drop table x"\n`);
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: flow\.yaml: field "applyAsDeletes": .*single boolean expression.*\(fix: .+\)$/);
    if (existsSync(path.join(dir, 'scd.duckdb'))) expect(await tablesOf(path.join(dir, 'scd.duckdb'))).not.toContain('t');
  });

  it('SQL injected into applyAsDeletes through scd apply (an E-string that closes the expression, a file read in a subquery): one line each; no table dropped, nothing created', async () => {
    const dir = folder(`target: victim\nkeys: [id]\nsequenceBy: ts\n`);
    expect((await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir)).code).toBe(0);
    const hostile = [String.raw`"E'\\'' = 'a') AS x; COMMIT; DROP TABLE victim; DESCRIBE SELECT (E'\\'' = 'a'"`, `"(SELECT count(*) FROM read_text('/etc/passwd')) > 0"`];
    for (const [i, expr] of hostile.entries()) {
      writeFileSync(path.join(dir, `hostile${i}.yaml`), `target: t${i}\nkeys: [id]\nsequenceBy: ts\napplyAsDeletes: ${expr}\ndatabase: scd.duckdb\n`);
      const r = await scd(['apply', `hostile${i}.yaml`, '--input', 'in.ndjson'], dir);
      expect(r.code).toBe(1);
      expect(errorLines(r.stderr)).toEqual([expect.stringMatching(new RegExp(`^scd: hostile${i}\\.yaml: field "applyAsDeletes": .*\\(fix: .+\\)$`))]);
    }
    const tables = await tablesOf(path.join(dir, 'scd.duckdb'));
    expect(tables).toContain('victim');
    expect(tables).not.toContain('t0');
    expect(tables).not.toContain('t1');
    const exported = await scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    expect(exported.stdout).toContain('"v":"a"');
  });

  it('applyAsDeletes that is not boolean, found at apply time: one error line; target not created', async () => {
    const dir = folder(`target: t\nkeys: [id]\nsequenceBy: ts\napplyAsDeletes: op\n`);
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson', '--json'], dir);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([expect.stringMatching(/^scd: flow\.yaml: field "applyAsDeletes": .*not a boolean.*\(fix: /)]);
    expect(await tablesOf(path.join(dir, 'scd.duckdb'))).not.toContain('t');
  });

  it('a sequence column absent from the source: one error line; target not created', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequenceBy: changed_at\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson', '--json'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([expect.stringMatching(/^scd: flow\.yaml: field "sequenceBy": .*"changed_at".*\(fix: /)]);
    expect(await tablesOf(path.join(dir, 'scd.duckdb'))).not.toContain('t');
  });

  it('bad YAML: one line naming the file and the position', async () => {
    const dir = folder('target: t\nkeys: [id\nsequenceBy: ts\n');
    const r = await scd(['export', 'flow.yaml'], dir);
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: flow\.yaml: not valid YAML: .*line \d+.*\(fix: /);
  });

  it('a database folder that does not exist: one line with a fix', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequenceBy: ts\ndatabase: nowhere/x.duckdb\n');
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('nowhere');
    expect(lines[0]).toMatch(/\(fix: /);
  });

  it('SCD_DUCKDB_MEMORY_LIMIT that DuckDB refuses: one line with the fix, nothing applied; a valid one applies', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequenceBy: ts\n');
    const bad = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir, { SCD_DUCKDB_MEMORY_LIMIT: 'lots' });
    expect(bad.code).toBe(1);
    const lines = errorLines(bad.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: SCD_DUCKDB_MEMORY_LIMIT=lots is not a memory size DuckDB accepts: .*\(fix: give a size such as 1GB or 512MB/);
    const ok = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir, { SCD_DUCKDB_MEMORY_LIMIT: '512MB' });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/commit 1: read 1 row/);
  });
});
