/**
 * Names that clash, through the CLI (docs/decisions/0036 and 0037): a clash is one stderr line with
 * the fix and a non-zero exit, and the database file is as it was; a source column named rowid
 * is a plain column.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, ndjson, parseNdjson, queryDb, scd, scdOk, tablesOf, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
let n = 0;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

function folder(): string {
  const dir = path.join(tmp.dir, `case${++n}`);
  mkdirSync(dir);
  return dir;
}

describe('name clashes through scd', () => {
  it('targets dim and DIM in one DuckDB file: the second is one line naming both and the fix; the file as it was', async () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'dim.yaml'), 'target: dim\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\n');
    writeFileSync(path.join(dir, 'DIM.yaml'), 'target: DIM\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\n');
    writeFileSync(path.join(dir, 'in.ndjson'), ndjson([{ id: 1, seq: 1, v: 'a' }]));
    await scdOk(['apply', 'dim.yaml', '--input', 'in.ndjson'], dir);
    const db = path.join(dir, 'w.duckdb');
    const tables = await tablesOf(db);
    const r = await scd(['apply', 'DIM.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: DIM\.yaml: field "target": target "DIM" .*target "dim".*ignores case.*\(fix: write target: dim .*\)$/);
    expect(await tablesOf(db)).toEqual(tables);
    expect(await queryDb(db, 'SELECT CAST(count(*) AS INTEGER) AS n FROM _scd_commits')).toEqual([{ n: 1 }]);
  });

  it('a source column _change_type: one line naming it and the fix, nothing created', async () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\n');
    writeFileSync(path.join(dir, 'in.ndjson'), ndjson([{ id: 1, seq: 1, _change_type: 'x' }]));
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/"_change_type" has the name of a column the change feed adds.*\(fix: .*exceptColumns/);
    expect(await tablesOf(path.join(dir, 'w.duckdb'))).not.toContain('t');
  });

  it('a source column rowid: every event applied, the later commit closes the right version', async () => {
    const dir = folder();
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: t\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\n');
    writeFileSync(path.join(dir, 'b1.csv'), 'id,seq,rowid,v\n1,1,1,a\n2,1,0,b\n');
    writeFileSync(path.join(dir, 'b2.ndjson'), ndjson([{ id: 2, seq: 2, rowid: 0, v: 'c' }]));
    const first = JSON.parse((await scdOk(['apply', 'flow.yaml', '--input', 'b1.csv', '--json'], dir)).stdout);
    expect([first.eventsApplied, first.duplicates]).toEqual([2, 0]);
    await scdOk(['apply', 'flow.yaml', '--input', 'b2.ndjson'], dir);
    const rows = parseNdjson((await scdOk(['export', 'flow.yaml', '--format', 'ndjson'], dir)).stdout);
    expect(rows.map((r) => [r.id, r.rowid, r.v, r.__START_AT, r.__END_AT])).toEqual([
      [1, 1, 'a', 1, null],
      [2, 0, 'b', 1, 2],
      [2, 0, 'c', 2, null],
    ]);
  });
});
