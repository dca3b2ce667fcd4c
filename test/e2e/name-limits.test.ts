/**
 * Names an engine cannot keep as written, through bin/scd on DuckDB (a file), PGlite (a folder)
 * and a PostgreSQL server (when SCD_TEST_POSTGRES_URL is set): PostgreSQL keeps the first 63
 * bytes of a name, so a longer one is refused in one line before anything is written (never cut
 * short silently, never two names made one, never "already exists" halfway); a NUL in a name is
 * refused on every engine. DuckDB keeps long names whole.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { errorLines, parseNdjson, type RunResult, scd, scdOk, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

/** Exit 1 and one line `scd: …` matching `what`, with a fix; nothing of a bug. */
function refusedInOneLine(r: RunResult, what: RegExp): string {
  expect(r.code, r.stderr).toBe(1);
  const lines = errorLines(r.stderr);
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
  expect(lines[0]).toMatch(/\(fix: .+\)$/);
  expect(r.stderr).not.toMatch(/bug in scdkit|already exists|specified more than once|\n\s+at /);
  return lines[0]!;
}

// 70 letters; two of them alike in their first 63 bytes. 32 × "é" is 64 bytes in 32 characters.
const LONG = 'customer_lifetime_value_in_euros_including_taxes_and_discounts_applied';
const LONG_TOO = `${LONG.slice(0, 63)}_second`;
const WIDE = 'é'.repeat(32);
const FIT = 'c'.repeat(63);

interface Engine {
  name: string;
  postgres: boolean;
  /** A folder with flow.yaml (the fields given, a landing folder in/) and the --db arguments. */
  project(name: string, flow: string): Promise<{ dir: string; db: string[]; close: () => Promise<void> }>;
}

function folder(name: string, flow: string, extra = ''): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(path.join(dir, 'in'), { recursive: true });
  writeFileSync(path.join(dir, 'flow.yaml'), `${flow}\nsequenceBy: seq\ndatabase: w.duckdb\nsource:\n  path: in/\n${extra}`);
  return dir;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const ENGINES: Engine[] = [
  { name: 'duckdb', postgres: false, project: async (name, flow) => ({ dir: folder(`duckdb-${name}`, flow), db: [], close: async () => {} }) },
  {
    name: 'pglite',
    postgres: true,
    project: async (name, flow) => {
      const dir = folder(`pglite-${name}`, flow);
      return { dir, db: ['--db', `pglite://${path.join(dir, 'pgdata')}`], close: async () => {} };
    },
  },
];
if (url)
  ENGINES.push({
    name: 'postgres',
    postgres: true,
    project: async (name, flow) => {
      const schema = freshSchema();
      const dir = folder(`postgres-${name}`, flow, `schema: ${schema}\n`);
      const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
      return { dir, db: ['--db', url], close: () => owner.close() };
    },
  });

const write = (dir: string, file: string, text: string) => writeFileSync(path.join(dir, 'in', file), text);

for (const engine of ENGINES) {
  describe(`${engine.name}: names the engine cannot keep`, () => {
    it('a source column longer than 63 bytes (JSON and CSV), two alike in their first 63, one of 64 bytes in 32 characters', async () => {
      for (const [i, [file, text, named]] of (
        [
          ['a.ndjson', `{"id": 1, "seq": 1, "${LONG}": 12.50}\n`, LONG],
          ['a.ndjson', `{"id": 1, "seq": 1, "${LONG}": "a", "${LONG_TOO}": "b"}\n`, LONG],
          ['a.csv', `id,seq,${WIDE}\n1,1,x\n`, WIDE],
        ] as const
      ).entries()) {
        const p = await engine.project(`column${i}`, 'target: dim_customer\nkeys: [id]');
        try {
          write(p.dir, file, text);
          const r = await scd(['apply', 'flow.yaml', ...p.db], p.dir);
          if (!engine.postgres) {
            // DuckDB keeps the names whole.
            expect(r.code, r.stderr).toBe(0);
            const rows = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
            expect(Object.keys(rows[0]!)).toContain(named);
            continue;
          }
          const bytes = Buffer.byteLength(named);
          refusedInOneLine(
            r,
            new RegExp(
              `source column "${named}" is ${bytes} bytes long, and PostgreSQL keeps only the first 63 bytes of a name; nothing was applied \\(fix: rename it in the source\\)`,
            ),
          );
          // Nothing was applied: the pending file is still pending, and the target was never made.
          const status = await scd(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir);
          expect(status.code).not.toBe(0);
        } finally {
          await p.close();
        }
      }
    }, 300_000);

    it('a name of exactly 63 bytes is kept whole, on every engine', async () => {
      const p = await engine.project('fit', 'target: dim_customer\nkeys: [id]');
      try {
        write(p.dir, 'a.ndjson', `{"id": 9007199254740993, "seq": "2025-03-01T10:00:00.123456+01:00", "${FIT}": "Zoë 😀"}\n`);
        await scdOk(['apply', 'flow.yaml', ...p.db], p.dir);
        const rows = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
        expect(rows).toHaveLength(1);
        expect(rows[0]![FIT]).toBe('Zoë 😀');
      } finally {
        await p.close();
      }
    }, 300_000);

    it('a target whose tables would be named over 63 bytes: one line with the longest target name that fits', async () => {
      for (const target of ['t'.repeat(200), 'dim_customer_history_of_every_address_and_tier_x']) {
        const p = await engine.project(`target${target.length}`, `target: ${target}\nkeys: [id]`);
        try {
          write(p.dir, 'a.ndjson', '{"id": 1, "seq": 1, "v": "a"}\n');
          const r = await scd(['apply', 'flow.yaml', ...p.db], p.dir);
          if (!engine.postgres) {
            expect(r.code, r.stderr).toBe(0);
            continue;
          }
          const line = refusedInOneLine(r, /field "target": target ".*bytes long, and PostgreSQL keeps only the first 63 bytes of a name; nothing was applied/);
          expect(line).toContain('(fix: give the flow a target name of at most 47 bytes');
          if (target.length < 63) expect(line).toContain(`the name of its quarantine, "_scd_${target}_quarantine", is ${target.length + 16} bytes long`);
        } finally {
          await p.close();
        }
      }
    }, 300_000);

    it('a NUL in a key name (flow) or in a source column name: one line, on every engine', async () => {
      const p = await engine.project('nul', 'target: dim_customer\nkeys: ["id\\0x"]');
      try {
        write(p.dir, 'a.ndjson', '{"id\\u0000x": 1, "seq": 1, "v": "a"}\n');
        refusedInOneLine(
          await scd(['apply', 'flow.yaml', ...p.db], p.dir),
          /field "keys": the column name "id\\u0000x" holds a NUL character \(\\u0000\), which no engine keeps in a name; nothing was applied \(fix: rename the column in the source and in the flow\)/,
        );
        // The flow rewritten keeps the test's own schema on a server.
        const schemaLine = /schema: \S+\n/.exec(readFileSync(path.join(p.dir, 'flow.yaml'), 'utf8'))?.[0] ?? '';
        writeFileSync(path.join(p.dir, 'flow.yaml'), `target: dim_customer\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\nsource:\n  path: in/\n${schemaLine}`);
        write(p.dir, 'a.ndjson', '{"id": 1, "seq": 1, "note\\u0000": "a"}\n{"id": 2, "seq": 1, "note": "b"}\n');
        const r = await scd(['apply', 'flow.yaml', ...p.db, '--json'], p.dir);
        if (!engine.postgres) refusedInOneLine(r, /source column "note\\u0000" holds a NUL character/);
        else {
          // PostgreSQL's JSON staging quarantines the record that holds a NUL (its text cannot), and applies the rest.
          expect(r.code, r.stderr).toBe(0);
          const q = parseNdjson((await scdOk(['quarantine', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
          expect(q.map((x) => [x.line, x.reason])).toEqual([[1, 'a NUL character (\\u0000) in a string']]);
        }
        // A CSV header with a NUL: one line on every engine, not the engine's parser error.
        writeFileSync(path.join(p.dir, 'flow.yaml'), `target: dim_csv\nkeys: [id]\nsequenceBy: seq\ndatabase: w.duckdb\nsource:\n  path: csv/\n${schemaLine}`);
        mkdirSync(path.join(p.dir, 'csv'));
        writeFileSync(path.join(p.dir, 'csv', 'a.csv'), 'id,seq,no\u0000te\n1,2025-03-01T10:00:00Z,Zoë\n');
        refusedInOneLine(
          await scd(['apply', 'flow.yaml', ...p.db], p.dir),
          /source column "no\\u0000te" holds a NUL character \(\\u0000\), which no engine keeps in a name; nothing was applied \(fix: rename it in the source\)/,
        );
      } finally {
        await p.close();
      }
    }, 300_000);
  });
}
