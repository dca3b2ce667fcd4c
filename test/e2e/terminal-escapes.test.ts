/**
 * A table for people (`--format table`: export, quarantine, show, as-of, changes, log) never
 * hands a terminal a character it would act on: a control character (C0, DEL, C1, an escape
 * sequence) or a bidirectional control in a value, a column name or a file name is shown as its
 * escape (`\x1b`, `\u202e`), and the columns stay aligned on that text. NDJSON and CSV keep every
 * value exact. Through bin/scd on DuckDB, PGlite and a PostgreSQL server (when
 * SCD_TEST_POSTGRES_URL is set).
 */
import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { parseNdjson, SCD, scd, scdOk, tempDir } from './fixtures/cli.js';

/** Retitles the window (OSC), clears the screen (CSI), colours, a C1 CSI, DEL, a right-to-left override and an isolate. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\u001b[31mred\u009b1m\u007f\u202eevil\u2066ü€';
const HOSTILE_SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mred\\x9b1m\\x7f\\u202eevil\\u2066ü€';
/** Everything a terminal acts on, but the line breaks between the lines of the table. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds
const ACTED_ON = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

const CSV =
  'id,ts,name,amount,big\n' +
  `1,2024-01-01T00:00:00+02:00,"${HOSTILE}",12.50,9007199254740993\n` +
  '1,2024-02-01T09:30:00-05:00,plain,13.05,-9223372036854775808\n' +
  `2,not a time \u001b[2J\u001b]0;owned\u0007,quarantined,1.00,1\n`;

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir('scdkit-escapes-');
});
afterAll(() => tmp.cleanup());

interface Engine {
  name: string;
  /** A project folder (flow.yaml, changes.csv) and the --db arguments that put it on the engine. */
  project(): Promise<{ dir: string; db: string[]; close: () => Promise<void> }>;
}

function writeProject(name: string, extra = ''): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir);
  writeFileSync(
    path.join(dir, 'flow.yaml'),
    `target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\ncolumnTypes: { ts: timestamp, amount: "decimal(10,2)", big: bigint }\n${extra}`,
  );
  writeFileSync(path.join(dir, 'changes.csv'), CSV);
  return dir;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const ENGINES: Engine[] = [
  { name: 'duckdb', project: async () => ({ dir: writeProject('duckdb'), db: [], close: async () => {} }) },
  {
    name: 'pglite',
    project: async () => {
      const dir = writeProject('pglite');
      return { dir, db: ['--db', `pglite://${path.join(dir, 'pgdata')}`], close: async () => {} };
    },
  },
];
if (url)
  ENGINES.push({
    name: 'postgres',
    project: async () => {
      const schema = freshSchema();
      const dir = writeProject('postgres');
      appendFileSync(path.join(dir, 'flow.yaml'), `schema: ${schema}\n`);
      const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
      return { dir, db: ['--db', url], close: () => owner.close() };
    },
  });

/** No character a terminal acts on; every line of the table has its columns where the header has them. */
function safeAndAligned(table: string, column: string): string[] {
  expect(table).not.toMatch(ACTED_ON);
  const lines = table.split('\n').filter((l) => l !== '');
  const at = lines[0]!.indexOf(column);
  expect(at, lines[0]).toBeGreaterThan(0);
  // The rule under the header marks each column's width: the column starts after two spaces.
  expect(lines[1]!.slice(at - 2, at + 1)).toBe('  -');
  for (const line of lines.slice(2)) expect(line.slice(at - 2, at), line).toBe('  ');
  return lines;
}

/** `scd ...args` with its stdout on a terminal (a pseudo-terminal `script` gives it): what a person sees. */
function onTerminal(args: string[], cwd: string): Promise<string> {
  const quoted = [process.execPath, SCD, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) =>
    execFile('script', ['-qec', quoted, '/dev/null'], { cwd, env: { ...process.env, SCD_DEBUG: '' } }, (error, stdout) =>
      error ? reject(error) : resolve(String(stdout).replace(/\r\n/g, '\n')),
    ),
  );
}

for (const engine of ENGINES) {
  describe(`${engine.name}: a table for people shows control characters as escapes`, () => {
    let p: { dir: string; db: string[]; close: () => Promise<void> };
    beforeAll(async () => {
      p = await engine.project();
      await scdOk(['apply', 'flow.yaml', ...p.db, '--input', 'changes.csv'], p.dir);
    }, 120_000);
    afterAll(() => p.close());

    const table = async (...args: string[]) => (await scdOk([...args, ...p.db, '--format', 'table'], p.dir)).stdout;

    it('export: the value escaped, the columns aligned', async () => {
      const out = await table('export', 'flow.yaml');
      const lines = safeAndAligned(out, 'amount');
      expect(lines.find((l) => l.startsWith('1 '))).toContain(HOSTILE_SHOWN);
      expect(out).toContain('9007199254740993');
      expect(out).toContain('-9223372036854775808');
      expect(out).toContain('12.5  ');
    });

    it('show, as-of and changes: the value escaped, the columns aligned', async () => {
      for (const args of [
        ['show', 'flow.yaml', '--key', 'id=1'],
        ['as-of', 'flow.yaml', '2024-01-15T00:00:00Z'],
        ['changes', 'flow.yaml'],
      ]) {
        const out = await table(...args);
        safeAndAligned(out, 'amount');
        expect(out, args.join(' ')).toContain(HOSTILE_SHOWN);
      }
    });

    it('quarantine: the raw record and the reason escaped, the columns aligned', async () => {
      const out = await table('quarantine', 'flow.yaml');
      const lines = safeAndAligned(out, 'raw');
      expect(lines).toHaveLength(3);
      expect(lines[2]).toContain('not a time \\x1b[2J\\x1b]0;owned\\x07');
    });

    it('on a terminal: the default table, and quarantine --raw, show escapes; to a pipe --raw is exact', async () => {
      const exported = await onTerminal(['export', 'flow.yaml', ...p.db], p.dir);
      expect(exported).not.toMatch(ACTED_ON);
      expect(exported).toContain(HOSTILE_SHOWN);
      const raw = await onTerminal(['quarantine', 'flow.yaml', ...p.db, '--raw'], p.dir);
      expect(raw).not.toMatch(ACTED_ON);
      expect(raw).toContain('2,not a time \\x1b[2J\\x1b]0;owned\\x07,quarantined,1.00,1');
      const piped = (await scdOk(['quarantine', 'flow.yaml', ...p.db, '--raw'], p.dir)).stdout;
      expect(piped).toBe('2,not a time \u001b[2J\u001b]0;owned\u0007,quarantined,1.00,1\n');
    });

    it('NDJSON and CSV keep the value exact', async () => {
      const nd = parseNdjson((await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
      expect(nd.find((r) => r.name !== 'plain')?.name).toBe(HOSTILE);
      const csv = (await scdOk(['export', 'flow.yaml', ...p.db, '--format', 'csv'], p.dir)).stdout;
      expect(csv).toContain(HOSTILE);
      const q = parseNdjson((await scdOk(['quarantine', 'flow.yaml', ...p.db, '--format', 'ndjson'], p.dir)).stdout);
      expect(String(q[0]!.raw)).toContain('not a time \u001b[2J\u001b]0;owned\u0007');
    });
  });
}

describe('a column name and a file name are escaped too', () => {
  it('a CSV header with an escape sequence, a file name with one (export, log)', async () => {
    const dir = path.join(tmp.dir, 'names');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: dim\nkeys: id\nsequenceBy: ts\ndatabase: t.duckdb\n');
    const file = 'in\u001b[2Jput.csv';
    writeFileSync(path.join(dir, file), `id,ts,"na\u001b[31mme"\n1,5,x\n`);
    const applied = await scd(['apply', 'flow.yaml', '--input', file], dir);
    expect(applied.code, applied.stderr).toBe(0);
    const exported = (await scdOk(['export', 'flow.yaml', '--format', 'table'], dir)).stdout;
    expect(exported).not.toMatch(ACTED_ON);
    expect(exported).toContain('na\\x1b[31mme');
    const log = (await scdOk(['log', 'flow.yaml', '--format', 'table'], dir)).stdout;
    expect(log).not.toMatch(ACTED_ON);
    expect(log).toContain('in\\x1b[2Jput.c');
  });
});
