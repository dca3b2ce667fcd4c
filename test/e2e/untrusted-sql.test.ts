/**
 * A flow file runs no SQL beyond the record's own values unless it says it is trusted: a
 * `source.query` without `trusted: true` (reading a file, a server file, a setting, changing a
 * setting) and a flow expression that reads the session, the engine or the catalog are refused in
 * one line before anything is opened or changed, through bin/scd on DuckDB, PGlite and a
 * PostgreSQL server (when SCD_TEST_POSTGRES_URL is set). With `trusted: true` a query runs.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { errorLines, parseNdjson, type RunResult, scd, scdOk, tempDir } from './fixtures/cli.js';

const QUERIES: Array<[string, string]> = [
  ['a file (DuckDB read_csv)', "SELECT * FROM read_csv('/etc/passwd', header = false)"],
  ['a file (DuckDB read_text)', "SELECT 1 AS id, 1 AS ts, content AS secret FROM read_text('/etc/passwd')"],
  ['a server file (pg_read_file)', "SELECT 1 AS id, 1 AS ts, pg_read_file('/etc/passwd') AS secret"],
  ['a setting changed (set_config)', "SELECT 1 AS id, 1 AS ts, set_config('search_path', 'evil', false) AS secret"],
  ['a setting read', "SELECT 1 AS id, 1 AS ts, current_setting('search_path') AS secret"],
  ["the database's own table", 'SELECT * FROM raw_changes'],
];

const EXPRESSIONS = ["current_setting('search_path') = ''", "getvariable('x') IS NULL", "version() <> ''", "current_user = 'postgres'", 'tableoid > 0'];

let tmp: { dir: string; cleanup: () => void };
let projects = 0;
beforeAll(() => {
  tmp = tempDir('scdkit-untrusted-');
});
afterAll(() => tmp.cleanup());

interface Engine {
  name: string;
  /** A folder for a flow, the flow's extra lines and the --db arguments that put it on the engine. */
  project(): Promise<{ dir: string; extra: string; db: string[]; close: () => Promise<void> }>;
}

function folder(): string {
  const dir = path.join(tmp.dir, `p${++projects}`);
  mkdirSync(dir);
  return dir;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const ENGINES: Engine[] = [
  { name: 'duckdb', project: async () => ({ dir: folder(), extra: '', db: [], close: async () => {} }) },
  {
    name: 'pglite',
    project: async () => {
      const dir = folder();
      return { dir, extra: '', db: ['--db', `pglite://${path.join(dir, 'pgdata')}`], close: async () => {} };
    },
  },
];
if (url)
  ENGINES.push({
    name: 'postgres',
    project: async () => {
      const schema = freshSchema();
      const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
      return { dir: folder(), extra: `schema: ${schema}\n`, db: ['--db', url], close: () => owner.close() };
    },
  });

/** Exit 1, one `scd:` line naming the field and the fix, no database made. */
function refused(r: RunResult, dir: string, field: string, what: RegExp): string {
  expect(r.code, r.stderr).toBe(1);
  const lines = errorLines(r.stderr);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toContain(`field "${field}"`);
  expect(lines[0]).toMatch(what);
  expect(lines[0]).toMatch(/\(fix: .+\)$/);
  expect(r.stdout + r.stderr).not.toMatch(/root:|bug in scdkit|\n\s+at /);
  expect(existsSync(path.join(dir, 't.duckdb'))).toBe(false);
  expect(existsSync(path.join(dir, 'pgdata'))).toBe(false);
  return lines[0]!;
}

for (const engine of ENGINES) {
  describe(`${engine.name}: SQL a flow may run`, () => {
    for (const [what, query] of QUERIES) {
      it(`source.query without trusted: true is refused up front: ${what}`, async () => {
        const p = await engine.project();
        try {
          writeFileSync(path.join(p.dir, 'flow.yaml'), `target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\n${p.extra}source:\n  query: ${JSON.stringify(query)}\n`);
          const line = refused(await scd(['apply', 'flow.yaml', ...p.db], p.dir), p.dir, 'source.query', /trusted flows only/);
          expect(line).toMatch(/trusted: true/);
          expect(line).toMatch(/view/);
        } finally {
          await p.close();
        }
      });
    }

    for (const expr of EXPRESSIONS) {
      it(`an expression reading more than the record is refused: ${expr}`, async () => {
        const p = await engine.project();
        try {
          writeFileSync(path.join(p.dir, 'flow.yaml'), `target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\n${p.extra}applyAsDeletes: ${JSON.stringify(expr)}\n`);
          writeFileSync(path.join(p.dir, 'in.ndjson'), '{"id":9007199254740993,"ts":"2024-03-01T10:00:00+01:00","name":"Zoë"}\n');
          const r = await scd(['apply', 'flow.yaml', ...p.db, '--input', 'in.ndjson'], p.dir);
          expect(r.code, r.stderr).toBe(1);
          const lines = errorLines(r.stderr);
          expect(lines, r.stderr).toHaveLength(1);
          expect(lines[0]).toContain('field "applyAsDeletes"');
          expect(lines[0]).toMatch(/single boolean expression over the record|cannot be evaluated/);
          expect(r.stderr).not.toMatch(/bug in scdkit|\n\s+at /);
          // Nothing was applied: the target does not exist.
          const exported = await scd(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir);
          expect(exported.code).toBe(1);
        } finally {
          await p.close();
        }
      });
    }

    it('a trusted query of the same database runs', async () => {
      const p = await engine.project();
      try {
        writeFileSync(path.join(p.dir, 'seed.ndjson'), '{"id":1,"ts":"2024-03-01T10:00:00+01:00","amount":"12.50","name":"Zoë"}\n');
        writeFileSync(
          path.join(p.dir, 'seed.yaml'),
          `target: raw_changes\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\n${p.extra}storedAs: scd1\ncolumnTypes: { amount: "decimal(10,2)" }\n`,
        );
        await scdOk(['apply', 'seed.yaml', ...p.db, '--input', 'seed.ndjson'], p.dir);
        writeFileSync(
          path.join(p.dir, 'flow.yaml'),
          `target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\n${p.extra}source:\n  query: "SELECT id, ts, amount, name FROM raw_changes"\n  trusted: true\n`,
        );
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        const rows = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ id: 1, amount: 12.5, name: 'Zoë' });
      } finally {
        await p.close();
      }
    });
  });
}

it('trusted: true without a query is refused', async () => {
  const dir = folder();
  writeFileSync(path.join(dir, 'flow.yaml'), 'target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\nsource:\n  table: raw\n  trusted: true\n');
  refused(await scd(['apply', 'flow.yaml'], dir), dir, 'source.trusted', /for a query source/);
});
