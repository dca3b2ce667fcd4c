/**
 * A landing file is identified by its name inside the source folder and its content (size +
 * SHA-256), not by where the folder is: through bin/scd, a project moved or copied elsewhere
 * (flow, folder and all) finds nothing new, also after `compact` (nothing quarantined as older
 * than the watermark); a file renamed in place is the file applied; a copy beside its original is
 * a new file; a file whose content changed after it was applied is reported and never applied
 * again; a database that recorded absolute paths (before names) finds nothing new, and its
 * records take their names with its next commit. On DuckDB files, PGlite folders and, when
 * SCD_TEST_POSTGRES_URL is set, a PostgreSQL server.
 */
import { appendFileSync, cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { type Driver, openDriver } from '../../src/index.js';
import { freshSchema } from '../engines.js';
import { errorLines, parseNdjson, scd, tempDir } from './fixtures/cli.js';

const FLOW = `name: moved
target: dim_moved
keys: [id]
sequenceBy: ts
columnTypes: { amount: "decimal(18,2)" }
database: moved.duckdb
source:
  path: landing/
`;

const FILES: Record<string, string> = {
  '2025-01-01.ndjson':
    `{"id":1,"ts":"2025-01-01T00:00:00Z","amount":10.25,"name":"Zoë","note":null}\n` + `{"id":2,"ts":"2025-01-01T05:30:00+05:30","amount":-0.01,"name":"日本語","note":""}\n`,
  '2025-01-02.ndjson':
    `{"id":1,"ts":"2025-01-02T00:00:00-08:00","amount":99999.99,"name":"Zoe","note":"x"}\n` + `{"id":3,"ts":"2025-01-02T00:00:00Z","amount":null,"name":"🙂","note":null}\n`,
};

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

interface Engine {
  name: string;
  /** The database of a project: a DuckDB file inside it (it moves with it), else one outside it. */
  db(name: string): string[];
  open(dir: string, name: string): Promise<Driver>;
  flowLines(name: string): string;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const schemas = new Map<string, string>();
const schemaOf = (name: string) => {
  if (!schemas.has(name)) schemas.set(name, freshSchema());
  return schemas.get(name)!;
};
const pgFolder = (name: string) => path.join(tmp.dir, `pg-${name}`);
const ENGINES: Engine[] = [
  { name: 'duckdb', db: () => [], open: (dir) => openDriver(path.join(dir, 'moved.duckdb')), flowLines: () => '' },
  { name: 'pglite', db: (name) => ['--db', `pglite://${pgFolder(name)}`], open: (_, name) => openDriver(`pglite://${pgFolder(name)}`), flowLines: () => '' },
  ...(url
    ? [
        {
          name: 'postgres',
          db: () => ['--db', url],
          open: (_: string, name: string) => PostgresDriver.connect(url, { schema: schemaOf(name) }),
          flowLines: (name: string) => `schema: ${schemaOf(name)}\n`,
        },
      ]
    : []),
];

/** A project folder: flow.yaml and landing/ with both files. */
function project(engine: Engine, name: string): string {
  const dir = path.join(tmp.dir, `${engine.name}-${name}`, 'project');
  mkdirSync(path.join(dir, 'landing'), { recursive: true });
  writeFileSync(path.join(dir, 'flow.yaml'), FLOW + engine.flowLines(`${engine.name}-${name}`));
  for (const [f, text] of Object.entries(FILES)) writeFileSync(path.join(dir, 'landing', f), text);
  return dir;
}

/** Move a project folder elsewhere (flow, landing folder and a DuckDB file with it). */
function moved(dir: string): string {
  const to = path.join(path.dirname(dir), 'elsewhere', 'project');
  mkdirSync(path.dirname(to), { recursive: true });
  renameSync(dir, to);
  return to;
}

async function withDb<T>(engine: Engine, dir: string, name: string, fn: (d: Driver) => Promise<T>): Promise<T> {
  const driver = await engine.open(dir, `${engine.name}-${name}`);
  try {
    return await fn(driver);
  } finally {
    await driver.close();
  }
}

const recordedPaths = (engine: Engine, dir: string, name: string) =>
  withDb(engine, dir, name, async (d) => (await d.query(`SELECT path FROM _scd_files WHERE target = 'dim_moved' ORDER BY path`)).map((r) => String(r.path)));

async function dropSchemas(): Promise<void> {
  if (!url) return;
  for (const schema of schemas.values()) {
    const owner = await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true });
    await owner.close();
  }
}
afterAll(dropSchemas);

describe.each(ENGINES)('a landing file is its name in the folder and its content ($name)', (engine) => {
  const run = (args: string[], dir: string, name: string) => scd([...args, ...engine.db(`${engine.name}-${name}`)], dir);
  const ok = async (args: string[], dir: string, name: string) => {
    const r = await run(args, dir, name);
    if (r.code !== 0) throw new Error(`scd ${args.join(' ')} exited ${r.code}:\n${r.stderr}`);
    return r;
  };
  const exported = async (dir: string, name: string) => (await ok(['export', 'flow.yaml', '--format', 'ndjson'], dir, name)).stdout;

  it('a moved or copied project finds nothing new; a file renamed in place is the one applied; a copy beside it is new; a changed one is never applied twice', {
    timeout: 300_000,
  }, async () => {
    const name = 'move';
    let dir = project(engine, name);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toMatch(/^commit 1: read 4 rows = 4 applied/);
    const before = await exported(dir, name);
    expect(await recordedPaths(engine, dir, name)).toEqual(['2025-01-01.ndjson', '2025-01-02.ndjson']);

    // A copy of the project elsewhere (a DuckDB file with it) finds nothing new either.
    const copy = path.join(path.dirname(dir), 'copy');
    cpSync(dir, copy, { recursive: true });
    expect((await ok(['apply', 'flow.yaml'], copy, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    dir = moved(dir);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    expect(await exported(dir, name)).toBe(before);
    expect((await ok(['status', 'flow.yaml', '--json'], dir, name)).stdout).toMatch(/"pendingFiles":0/);

    // Renamed in place: the same file (its record takes the new name with the next commit).
    renameSync(path.join(dir, 'landing', '2025-01-01.ndjson'), path.join(dir, 'landing', '2025-01-01-renamed.ndjson'));
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    // A copy beside its original is a new file: its records are read again (duplicates).
    cpSync(path.join(dir, 'landing', '2025-01-02.ndjson'), path.join(dir, 'landing', '2025-01-02-copy.ndjson'));
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toMatch(/^commit 2: read 2 rows = 0 applied \+ 2 duplicates/);
    expect(await recordedPaths(engine, dir, name)).toEqual(['2025-01-01-renamed.ndjson', '2025-01-02-copy.ndjson', '2025-01-02.ndjson']);
    expect(await exported(dir, name)).toBe(before);

    // Changed after it was applied: a warning, never applied again.
    appendFileSync(path.join(dir, 'landing', '2025-01-02.ndjson'), `{"id":9,"ts":"2025-03-01T00:00:00Z","amount":1,"name":"late","note":null}\n`);
    const changed = await ok(['apply', 'flow.yaml'], dir, name);
    expect(changed.stdout).toBe(
      'nothing new to apply: 1 file changed after it was applied and is not applied again (see the warning above: put new changes in a new file); 2 files already applied\n',
    );
    expect(errorLines(changed.stderr)).toEqual([expect.stringMatching(/^scd: warning: landing\/2025-01-02\.ndjson changed after commit 1 applied it; it is not applied again/)]);
    expect(await exported(dir, name)).toBe(before);
  });

  it('compact, then move the project: nothing is applied again, nothing quarantined as older than the watermark', { timeout: 300_000 }, async () => {
    const name = 'compact';
    let dir = project(engine, name);
    await ok(['apply', 'flow.yaml'], dir, name);
    await ok(['compact', 'flow.yaml', '--before', '2025-02-01'], dir, name);
    const before = await exported(dir, name);
    dir = moved(dir);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    expect((await ok(['quarantine', 'flow.yaml', '--format', 'ndjson'], dir, name)).stdout).toBe('');
    expect(await exported(dir, name)).toBe(before);
  });

  it('a database that recorded absolute paths finds nothing new, moved or not; its next commit records the names', { timeout: 300_000 }, async () => {
    const name = 'legacy';
    let dir = project(engine, name);
    await ok(['apply', 'flow.yaml'], dir, name);
    const before = await exported(dir, name);
    // As an earlier scdkit recorded them: each file by its absolute path.
    await withDb(engine, dir, name, (d) => d.run(`UPDATE _scd_files SET path = $1 || path WHERE target = 'dim_moved'`, [`${path.join(dir, 'landing')}${path.sep}`]));
    const legacy = (await recordedPaths(engine, dir, name)).map((p) => path.relative(dir, p));
    expect(legacy).toEqual([path.join('landing', '2025-01-01.ndjson'), path.join('landing', '2025-01-02.ndjson')]);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    dir = moved(dir);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toBe('nothing new to apply (2 files already applied)\n');
    expect((await ok(['status', 'flow.yaml', '--json'], dir, name)).stdout).toMatch(/"pendingFiles":0/);
    writeFileSync(path.join(dir, 'landing', '2025-01-03.ndjson'), `{"id":2,"ts":"2025-01-03T00:00:00Z","amount":3,"name":"ß","note":null}\n`);
    expect((await ok(['apply', 'flow.yaml'], dir, name)).stdout).toMatch(/^commit 2: read 1 row = 1 applied/);
    expect(await recordedPaths(engine, dir, name)).toEqual(['2025-01-01.ndjson', '2025-01-02.ndjson', '2025-01-03.ndjson']);
    const rows = parseNdjson(await exported(dir, name));
    expect(rows).toHaveLength(parseNdjson(before).length + 1);
    expect(readFileSync(path.join(dir, 'flow.yaml'), 'utf8')).toContain('path: landing/');
  });
});
