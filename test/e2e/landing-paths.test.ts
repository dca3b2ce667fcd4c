/**
 * Every path that applies files builds the same commit (sources/apply-files.ts filesCommit): the
 * same change files applied as a landing folder (`scd apply FLOW`, `--each`, one round of
 * `--watch`), named with `--input` (one commit, `--each`), and through the library (`apply` with
 * inputs, and with rows given in code) give the same target, rows and column order, and
 * `scd rebuild` after each gives it again. The records tie on their sequence (ties resolve by
 * payload, which follows the columns' order), carry zoned timestamps in mixed styles, exact
 * decimals, unicode, empty strings and nulls, and write their keys in another order than a
 * column-sorted one. Through bin/scd on DuckDB files, PGlite folders and, when
 * SCD_TEST_POSTGRES_URL is set, a PostgreSQL server.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { apply, loadFlowFile } from '../../src/index.js';
import { freshSchema } from '../engines.js';
import { errorLines, SCD, scd, scdOk, tempDir } from './fixtures/cli.js';

const FLOW = `name: paths
target: dim_paths
keys: [id]
sequenceBy: seq
columnTypes: { amount: "decimal(18,2)" }
applyAsDeletes: "op = 'D'"
exceptColumns: [op]
database: paths.duckdb
source:
  path: changes/
`;

/** Keys written in no sorted order (the first applied record: zeta first); key 1 ties at seq 1 (zeta decides), key 3 at seq 2 (an upsert and a delete), key 4 at seq 3. */
const FILES: Record<string, string> = {
  '001_first.ndjson': [
    // Quarantined (a null key): the first record READ orders its keys otherwise than the first applied.
    `{"op":"U","note":"q","name":"nobody","amount":2.5,"ts":"2025-01-01T00:00:00Z","seq":1,"id":null,"zeta":"q"}`,
    `{"zeta":"b","id":1,"seq":1,"ts":"2025-01-01T00:00:00Z","amount":1234567.25,"name":"Zoë","note":null,"op":"U"}`,
    `{"zeta":"a","id":1,"seq":1,"ts":"2025-01-01T05:30:00+05:30","amount":1.10,"name":"Zoe","note":"x","op":"U"}`,
    `{"zeta":"c","id":2,"seq":1,"ts":"2025-01-02T00:00:00Z","amount":-0.01,"name":"日本語","note":null,"op":"U"}`,
    `{"zeta":null,"id":4,"seq":3,"ts":"2025-01-04T00:00:00.123456Z","amount":0,"name":"🙂","note":"","op":"U"}`,
  ].join('\n'),
  '002_second.ndjson': [
    `{"note":"late","id":2,"seq":2,"ts":"2025-01-03T00:00:00-08:00","amount":3,"zeta":"d","name":"","op":"U"}`,
    `{"note":null,"id":3,"seq":2,"ts":"2025-01-03T00:00:00Z","amount":null,"zeta":null,"name":"é","op":"U"}`,
    `{"note":null,"id":3,"seq":2,"ts":"2025-01-03T00:00:00Z","amount":null,"zeta":null,"name":"e","op":"D"}`,
    `{"note":"n","id":4,"seq":3,"ts":"2025-01-04T05:30:00.123456+05:30","amount":99999.99,"zeta":"z","name":"Ω","op":"U"}`,
    `{"note":"n","id":1,"seq":5,"ts":"2025-02-01T00:00:00+00:00","amount":-1234567.25,"zeta":"y","name":null,"op":"U"}`,
  ].join('\n'),
};

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

/** Where each path's target lives: a DuckDB file beside the flow, a PGlite folder, or a server schema. */
interface Engine {
  name: string;
  /** Arguments that pick the database, for a project folder. */
  db(dir: string): string[];
  /** The database option of the library. */
  database(dir: string): string | undefined;
  /** Lines the flow file needs (a server schema). */
  flowLines(): string;
}

const url = process.env.SCD_TEST_POSTGRES_URL;
const ENGINES: Engine[] = [
  { name: 'duckdb', db: () => [], database: () => undefined, flowLines: () => '' },
  { name: 'pglite', db: (dir) => ['--db', `pglite://${path.join(dir, 'pg')}`], database: (dir) => `pglite://${path.join(dir, 'pg')}`, flowLines: () => '' },
  ...(url ? [{ name: 'postgres', db: () => ['--db', url], database: () => url, flowLines: () => `schema: ${freshSchema()}\n` }] : []),
];

/** A fresh project: flow.yaml and changes/ with both files. */
function project(name: string, engine: Engine): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(path.join(dir, 'changes'), { recursive: true });
  writeFileSync(path.join(dir, 'flow.yaml'), FLOW + engine.flowLines());
  for (const [f, text] of Object.entries(FILES)) writeFileSync(path.join(dir, 'changes', f), `${text}\n`);
  return dir;
}

/** One round of `scd apply --watch`: the first commit line, then SIGINT. */
async function watchOnce(dir: string, db: string[]): Promise<void> {
  const child = spawn(process.execPath, [SCD, 'apply', 'flow.yaml', ...db, '--watch', '--interval', '0.2'], { cwd: dir });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`--watch made no commit in 60 s: ${err}`)), 60_000);
    child.stdout.on('data', (d) => {
      out += String(d);
      if (/^commit \d+/m.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`--watch ended: ${err}`));
    });
  });
  child.kill('SIGINT');
  expect(await exited).toBe(0);
}

/** Each path, as a person or a program runs it, in a project of its own. */
const PATHS: Record<string, (dir: string, engine: Engine) => Promise<void>> = {
  'landing folder': async (dir, e) => void (await scdOk(['apply', 'flow.yaml', ...e.db(dir)], dir)),
  'landing folder --each': async (dir, e) => void (await scdOk(['apply', 'flow.yaml', '--each', ...e.db(dir)], dir)),
  '--input': async (dir, e) => void (await scdOk(['apply', 'flow.yaml', ...e.db(dir), '--input', ...Object.keys(FILES).map((f) => `changes/${f}`)], dir)),
  '--input --each': async (dir, e) => void (await scdOk(['apply', 'flow.yaml', ...e.db(dir), '--each', '--input', 'changes/'], dir)),
  '--watch': async (dir, e) => watchOnce(dir, e.db(dir)),
  'library inputs': async (dir, e) =>
    void (await apply(loadFlowFile(path.join(dir, 'flow.yaml')), {
      database: e.database(dir),
      inputs: readdirSync(path.join(dir, 'changes')).map((f) => path.join(dir, 'changes', f)),
    })),
  'library rows': async (dir, e) => {
    const rows = Object.values(FILES).flatMap((t) => t.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>));
    await apply(loadFlowFile(path.join(dir, 'flow.yaml')), { database: e.database(dir), rows });
  },
};

const exported = async (dir: string, e: Engine) => (await scdOk(['export', 'flow.yaml', ...e.db(dir), '--format', 'ndjson'], dir)).stdout;

describe.each(ENGINES)('every path that applies files gives one target ($name)', (engine) => {
  it('landing folder, --each, --watch, --input, --input --each, the library: the same rows and column order, and again after rebuild', { timeout: 600_000 }, async () => {
    const targets: Record<string, string> = {};
    const rebuilt: Record<string, string> = {};
    const owners: PostgresDriver[] = [];
    try {
      for (const [name, run] of Object.entries(PATHS)) {
        const dir = project(`${engine.name}-${name.replace(/\W+/g, '-')}`, engine);
        const schema = /^schema: (\S+)$/m.exec(readFileSync(path.join(dir, 'flow.yaml'), 'utf8'))?.[1];
        // Drops the path's schema on the server when closed, after the scd processes.
        if (url && schema) owners.push(await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true }));
        await run(dir, engine);
        targets[name] = await exported(dir, engine);
        await scdOk(['rebuild', 'flow.yaml', ...engine.db(dir)], dir);
        rebuilt[name] = await exported(dir, engine);
      }
    } finally {
      for (const o of owners) await o.close();
    }
    const reference = targets['landing folder']!;
    // The columns in the first record's key order; the ties resolved by that order's payload.
    const rows = reference
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(Object.keys(rows[0]!)).toEqual(['zeta', 'id', 'seq', 'ts', 'amount', 'name', 'note', '__START_AT', '__END_AT']);
    expect(rows.map((r) => [r.id, r.zeta, r.__START_AT, r.__END_AT])).toEqual([
      [1, 'b', 1, 5],
      [1, 'y', 5, null],
      [2, 'c', 1, 2],
      [2, 'd', 2, null],
      [4, 'z', 3, null],
    ]);
    for (const name of Object.keys(PATHS)) {
      expect(targets[name], name).toBe(reference);
      expect(rebuilt[name], `${name}, rebuilt`).toBe(reference);
    }
  });
});

const SNAPSHOT_FLOW = `name: snaps
target: dim_snaps
keys: [id]
columnTypes: { amount: "decimal(18,2)" }
database: snaps.duckdb
source:
  path: snapshots/
  mode: snapshot
`;

/** Two full images (keys in no sorted order): key 2 changes, key 3 goes (deleted by absence), key 4 comes. */
const SNAPSHOTS: Record<string, string> = {
  'snapshot_1.ndjson': [
    `{"name":"Zoë","id":1,"ts":"2025-01-01T00:00:00Z","amount":10.25,"note":null}`,
    `{"name":"日本語","id":2,"ts":"2025-01-01T05:30:00+05:30","amount":-0.01,"note":""}`,
    `{"name":"é","id":3,"ts":"2025-01-01T00:00:00-08:00","amount":null,"note":"x"}`,
  ].join('\n'),
  'snapshot_2.ndjson': [
    `{"name":"Zoë","id":1,"ts":"2025-01-01T00:00:00Z","amount":10.25,"note":null}`,
    `{"name":"🙂","id":2,"ts":"2025-01-02T00:00:00Z","amount":99999.99,"note":null}`,
    `{"name":"Ω","id":4,"ts":"2025-01-02T00:00:00+01:00","amount":0,"note":"n"}`,
  ].join('\n'),
};

function snapshotProject(name: string, engine: Engine): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(path.join(dir, 'snapshots'), { recursive: true });
  writeFileSync(path.join(dir, 'flow.yaml'), SNAPSHOT_FLOW + engine.flowLines());
  for (const [f, text] of Object.entries(SNAPSHOTS)) writeFileSync(path.join(dir, 'snapshots', f), `${text}\n`);
  return dir;
}

describe.each(ENGINES)('every path that applies snapshots gives one target ($name)', (engine) => {
  it('a snapshot folder, --input --each and the library apply each file as a snapshot; --input of two at once is refused', { timeout: 600_000 }, async () => {
    const snapshotFiles = (dir: string) => Object.keys(SNAPSHOTS).map((f) => path.join(dir, 'snapshots', f));
    const paths: Record<string, (dir: string) => Promise<void>> = {
      'snapshot folder': async (dir) => void (await scdOk(['apply', 'flow.yaml', ...engine.db(dir)], dir)),
      '--input --each': async (dir) => void (await scdOk(['apply', 'flow.yaml', ...engine.db(dir), '--each', '--input', 'snapshots/'], dir)),
      library: async (dir) => {
        const flow = loadFlowFile(path.join(dir, 'flow.yaml'));
        for (const f of snapshotFiles(dir)) await apply(flow, { database: engine.database(dir), inputs: [f] });
      },
    };
    const targets: Record<string, string> = {};
    const owners: PostgresDriver[] = [];
    try {
      for (const [name, run] of Object.entries(paths)) {
        const dir = snapshotProject(`${engine.name}-snap-${name.replace(/\W+/g, '-')}`, engine);
        const schema = /^schema: (\S+)$/m.exec(readFileSync(path.join(dir, 'flow.yaml'), 'utf8'))?.[1];
        if (url && schema) owners.push(await PostgresDriver.connect(url, { schema, dropSchemaOnClose: true }));
        await run(dir);
        targets[name] = await exported(dir, engine);
        if (name === 'snapshot folder') {
          const both = await scd(['apply', 'flow.yaml', ...engine.db(dir), '--input', ...snapshotFiles(dir)], dir);
          expect(both.code).toBe(1);
          expect(errorLines(both.stderr)).toEqual([expect.stringMatching(/a snapshot flow applies one snapshot a commit, and 2 files were given \(fix: .*--each/)]);
        }
      }
    } finally {
      for (const o of owners) await o.close();
    }
    const reference = targets['snapshot folder']!;
    const rows = reference
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Key 3, missing from the second snapshot, is deleted at its version.
    expect(rows.map((r) => [r.id, r.name, r.__START_AT, r.__END_AT])).toEqual([
      [1, 'Zoë', 1, null],
      [2, '日本語', 1, 2],
      [2, '🙂', 2, null],
      [3, 'é', 1, 2],
      [4, 'Ω', 2, null],
    ]);
    for (const name of Object.keys(paths)) expect(targets[name], name).toBe(reference);
  });
});
