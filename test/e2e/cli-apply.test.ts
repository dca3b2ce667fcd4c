/**
 * End to end through `bin/scd`: apply files one by one, --each over a folder, --json results,
 * path resolution (SEMANTICS §7), export formats, exit codes. Every run starts from a temp folder
 * that is NOT the repository, to prove the CLI works from anywhere.
 */

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDriver } from '../../src/index.js';
import { copyFixture, errorLines, libApply, libExport, ndjson, parseNdjson, SCD, scd, scdOk, tempDir } from './fixtures/cli.js';

const FLOW = 'dim_account';
const CHANGES = ['001_initial.ndjson', '002_upgrade_delete_new.ndjson', '003_late_and_duplicate.ndjson'];

let tmp: { dir: string; cleanup: () => void };
let expected: Array<Record<string, unknown>>;
let expectedText: string;

/** A fresh copy of the accounts fixture: <tmp>/<name>/proj (flow + changes) and <tmp>/<name>/work (cwd). */
function project(name: string): { proj: string; work: string; flow: string } {
  const base = path.join(tmp.dir, name);
  const proj = copyFixture('accounts', path.join(base, 'proj'));
  const work = path.join(base, 'work');
  mkdirSync(work, { recursive: true });
  return { proj, work, flow: path.join(proj, 'flow.yaml') };
}

beforeAll(() => {
  tmp = tempDir();
  const p = project('expected');
  expectedText = readFileSync(path.join(p.proj, 'expected.ndjson'), 'utf8');
  expected = parseNdjson(expectedText);
});
afterAll(() => tmp.cleanup());

describe('scd apply + export (accounts fixture)', () => {
  it('applies three files one by one, then exports exactly the hand-written rows', async () => {
    const { proj, work } = project('one-by-one');
    const results = [];
    for (const f of CHANGES) {
      // --input is relative to the current directory; the flow path too.
      const r = await scdOk(['apply', '../proj/flow.yaml', '--input', `../proj/changes/${f}`, '--json'], work);
      const lines = r.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      results.push(JSON.parse(lines[0]!));
    }
    expect(results.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(results.map((r) => [r.rowsRead, r.eventsApplied, r.duplicates, r.quarantined])).toEqual([
      [3, 3, 0, 0],
      [3, 3, 0, 0],
      [4, 3, 1, 0],
    ]);
    expect(results[0].inputs).toEqual([path.join(proj, 'changes', CHANGES[0]!)]);

    const out = await scdOk(['export', '../proj/flow.yaml', '--format', 'ndjson'], work);
    expect(parseNdjson(out.stdout)).toEqual(expected);
    // Column order and NDJSON text are part of the contract too.
    expect(out.stdout).toBe(expectedText);
    // The database is the flow's, next to the flow file, not in the current directory.
    expect(existsSync(path.join(proj, 'accounts.duckdb'))).toBe(true);
    expect(existsSync(path.join(work, 'accounts.duckdb'))).toBe(false);
  });

  it("--each over the flow's source folder gives the same target, one commit (and one --json line) per file", async () => {
    const { proj, work } = project('each');
    const r = await scdOk(['apply', path.join(proj, 'flow.yaml'), '--each', '--json'], work);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    const results = lines.map((l) => JSON.parse(l));
    expect(results.map((x) => x.version)).toEqual([1, 2, 3]);
    expect(results.map((x) => path.basename(x.inputs[0]))).toEqual(CHANGES);
    for (const x of results) expect(x.rowsRead).toBe(x.eventsApplied + x.duplicates + x.quarantined);
    const out = await scdOk(['export', path.join(proj, 'flow.yaml'), '--format', 'ndjson'], work);
    expect(parseNdjson(out.stdout)).toEqual(expected);
  });

  it('a folder as --input applied as ONE commit gives the same target (batch invariance)', async () => {
    const { work } = project('folder');
    const r = await scdOk(['apply', '../proj/flow.yaml', '--input', '../proj/changes', '--json'], work);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const res = JSON.parse(lines[0]!);
    expect(res.version).toBe(1);
    expect(res.inputs).toHaveLength(3);
    expect(res.rowsRead).toBe(10);
    expect(res.rowsRead).toBe(res.eventsApplied + res.duplicates + res.quarantined);
    const out = await scdOk(['export', '../proj/flow.yaml', '--format', 'ndjson'], work);
    expect(parseNdjson(out.stdout)).toEqual(expected);
  });

  it('files applied in reverse order give the same target', async () => {
    // The engine property, checked in-process (the CLI path is the one-by-one test above).
    const { proj } = project('reverse');
    for (const f of [...CHANGES].reverse()) await libApply(path.join(proj, 'flow.yaml'), [path.join(proj, 'changes', f)]);
    expect(await libExport(path.join(proj, 'flow.yaml'))).toBe(expectedText);
  });

  it('without --json, apply prints one summary line per commit on stdout', async () => {
    const { work } = project('summary');
    const r = await scdOk(['apply', '../proj/flow.yaml', '--each'], work);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toMatch(/^commit 3: read 4 rows = 3 applied \+ 1 duplicate \+ 0 quarantined/);
  });

  it('replaying a file records a commit with zero changes and leaves the target alone', async () => {
    const { proj, work } = project('replay');
    for (const f of CHANGES) await libApply(path.join(proj, 'flow.yaml'), [path.join(proj, 'changes', f)]);
    const r = await scdOk(['apply', '../proj/flow.yaml', '--input', `../proj/changes/${CHANGES[1]}`, '--json'], work);
    const res = JSON.parse(r.stdout.trim());
    expect(res).toMatchObject({ version: 4, rowsRead: 3, eventsApplied: 0, duplicates: 3, keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0 });
    expect(await libExport(path.join(proj, 'flow.yaml'))).toBe(expectedText);
  });
});

describe('every input format through the CLI', () => {
  it('.csv, .jsonl, .json (array), .parquet and .json (NDJSON) in one folder, with --each and as one commit', async () => {
    const { proj, work } = project('formats-in');
    const read = (f: string) => parseNdjson(readFileSync(path.join(proj, 'changes', f), 'utf8'));
    const mixed = path.join(work, 'mixed');
    mkdirSync(mixed);
    const cols = ['account_id', 'owner', 'tier', 'op', 'seq'];
    const csv = (rows: Array<Record<string, unknown>>) =>
      [cols.join(','), ...rows.map((r) => cols.map((c) => (r[c] === undefined || r[c] === null ? '' : String(r[c]))).join(','))].join('\n') + '\n';
    writeFileSync(path.join(mixed, '001_initial.csv'), csv(read(CHANGES[0]!)));
    writeFileSync(path.join(mixed, '002_upgrade.jsonl'), ndjson(read(CHANGES[1]!)));
    writeFileSync(path.join(mixed, '003_late.json'), JSON.stringify(read(CHANGES[2]!), null, 2));
    const src = path.join(work, 'ed.ndjson');
    writeFileSync(src, ndjson([{ account_id: 5, owner: 'Ed', tier: 'gold', op: 'U', seq: 40 }]));
    const driver = await openDriver(':memory:');
    try {
      await driver.run(`COPY (SELECT * FROM read_json('${src}')) TO '${path.join(mixed, '004_ed.parquet')}' (FORMAT parquet)`);
    } finally {
      await driver.close();
    }
    writeFileSync(path.join(mixed, '005_ed.json'), ndjson([{ account_id: 5, owner: 'Ed', tier: 'silver', op: 'U', seq: 41 }]));
    const want = [
      ...expected,
      { account_id: 5, owner: 'Ed', tier: 'gold', seq: 40, __START_AT: 40, __END_AT: 41 },
      { account_id: 5, owner: 'Ed', tier: 'silver', seq: 41, __START_AT: 41, __END_AT: null },
    ];

    const each = await scdOk(['apply', '../proj/flow.yaml', '--input', 'mixed', '--each', '--json', '--db', 'each.duckdb'], work);
    const results = each.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results.map((r) => [path.basename(r.inputs[0]), r.rowsRead, r.quarantined])).toEqual([
      ['001_initial.csv', 3, 0],
      ['002_upgrade.jsonl', 3, 0],
      ['003_late.json', 4, 0],
      ['004_ed.parquet', 1, 0],
      ['005_ed.json', 1, 0],
    ]);
    const a = await scdOk(['export', '../proj/flow.yaml', '--db', 'each.duckdb', '--format', 'ndjson'], work);
    expect(parseNdjson(a.stdout)).toEqual(want);

    await scdOk(['apply', '../proj/flow.yaml', '--input', 'mixed', '--db', 'one.duckdb'], work);
    const b = await scdOk(['export', '../proj/flow.yaml', '--db', 'one.duckdb', '--format', 'ndjson'], work);
    expect(b.stdout).toBe(a.stdout);
  });
});

describe('paths (SEMANTICS §7)', () => {
  it("--db is relative to the current directory; the flow's database to the flow file's folder", async () => {
    const { proj, work, flow } = project('db-paths');
    await scdOk(['apply', flow, '--input', path.join(proj, 'changes'), '--db', 'mine.duckdb'], work);
    expect(existsSync(path.join(work, 'mine.duckdb'))).toBe(true);
    expect(existsSync(path.join(proj, 'mine.duckdb'))).toBe(false);
    expect(existsSync(path.join(proj, 'accounts.duckdb'))).toBe(false);

    // Export from --db sees the rows; the flow's own database has no target yet.
    const out = await scdOk(['export', flow, '--db', 'mine.duckdb', '--format', 'ndjson'], work);
    expect(parseNdjson(out.stdout)).toEqual(expected);
    const none = await scd(['export', flow, '--format', 'ndjson'], work);
    expect(none.code).not.toBe(0);
    expect(errorLines(none.stderr)).toHaveLength(1);
    expect(none.stderr).toContain(FLOW);
    expect(none.stderr).toMatch(/scd apply/);

    // A nested relative --db from another folder points at the same file.
    const sub = path.join(work, 'sub');
    mkdirSync(sub);
    const again = await scdOk(['export', flow, '--db', '../mine.duckdb', '--format', 'ndjson'], sub);
    expect(parseNdjson(again.stdout)).toEqual(expected);
  });

  it('source.path and database of a JSON flow resolve against its folder, wherever scd runs', async () => {
    const { proj, work } = project('json-flow');
    mkdirSync(path.join(proj, 'state'));
    writeFileSync(
      path.join(proj, 'flow.json'),
      JSON.stringify({
        target: FLOW,
        keys: ['account_id'],
        sequenceBy: 'seq',
        applyAsDeletes: "op = 'D'",
        exceptColumns: ['op'],
        database: 'state/db.duckdb',
        source: { path: 'changes' },
      }),
    );
    await scdOk(['apply', '../proj/flow.json', '--each'], work);
    expect(existsSync(path.join(proj, 'state', 'db.duckdb'))).toBe(true);
    const out = await scdOk(['export', '../proj/flow.json', '--format', 'ndjson'], work);
    expect(parseNdjson(out.stdout)).toEqual(expected);
  });
});

describe('export formats', () => {
  let proj: string;
  let work: string;
  beforeAll(async () => {
    ({ proj, work } = project('formats'));
    for (const f of CHANGES) await libApply(path.join(proj, 'flow.yaml'), [path.join(proj, 'changes', f)]);
  });

  it('--format csv --out writes a CSV file relative to the current directory', async () => {
    const r = await scdOk(['export', '../proj/flow.yaml', '--format', 'csv', '--out', 'x.csv'], work);
    expect(r.stdout).toBe('');
    const text = readFileSync(path.join(work, 'x.csv'), 'utf8');
    const lines = text.trim().split('\n');
    expect(lines[0]).toBe('account_id,owner,tier,seq,__START_AT,__END_AT');
    expect(lines.slice(1)).toEqual(
      expected.map((r) =>
        Object.values(r)
          .map((v) => (v === null ? '' : String(v)))
          .join(','),
      ),
    );
  });

  it('--format csv to stdout writes the same CSV', async () => {
    const r = await scdOk(['export', '../proj/flow.yaml', '--format', 'csv'], work);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('account_id,owner,tier,seq,__START_AT,__END_AT');
    expect(lines).toHaveLength(expected.length + 1);
    expect(lines[6]).toBe('4,Di,gold,30,22,');
  });

  it('--format parquet --out writes a Parquet file with the same rows', async () => {
    await scdOk(['export', '../proj/flow.yaml', '--format', 'parquet', '--out', 'x.parquet'], work);
    const file = path.join(work, 'x.parquet');
    expect(existsSync(file)).toBe(true);
    const driver = await openDriver(':memory:');
    try {
      const rows = await driver.query(`SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')`);
      expect(rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v])))).toEqual(expected);
    } finally {
      await driver.close();
    }
  });

  it('the Parquet export can be applied into another flow', async () => {
    const other = path.join(work, 'other');
    mkdirSync(other);
    // The exported rows are versions; re-key them by (account_id, __START_AT) into an scd1 table.
    writeFileSync(path.join(other, 'flow.yaml'), 'target: copy\nkeys: [account_id, start_at]\nsequenceBy: seq\nstoredAs: scd1\n');
    // Rename the added columns so they do not clash with the new target's own.
    const driver = await openDriver(':memory:');
    const src = path.join(work, 'x.parquet').replace(/'/g, "''");
    const dst = path.join(other, 'in.parquet').replace(/'/g, "''");
    try {
      await driver.run(`COPY (SELECT account_id, owner, tier, seq, __START_AT AS start_at FROM read_parquet('${src}')) TO '${dst}' (FORMAT parquet)`);
    } finally {
      await driver.close();
    }
    await scdOk(['apply', 'flow.yaml', '--input', 'in.parquet'], other);
    const out = await scdOk(['export', 'flow.yaml', '--format', 'ndjson'], other);
    expect(parseNdjson(out.stdout)).toEqual(expected.map((r) => ({ account_id: r.account_id, owner: r.owner, tier: r.tier, seq: r.seq, start_at: r.__START_AT })));
  });

  it('--out with a .csv name picks csv without --format', async () => {
    await scdOk(['export', '../proj/flow.yaml', '--out', 'y.csv'], work);
    expect(readFileSync(path.join(work, 'y.csv'), 'utf8')).toBe(readFileSync(path.join(work, 'x.csv'), 'utf8'));
  });

  it('parquet to stdout is refused with one line and a fix', async () => {
    const r = await scd(['export', '../proj/flow.yaml', '--format', 'parquet'], work);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(/--out/);
  });

  it('export piped into a reader that stops early (like `| head -1`) ends quietly', async () => {
    // Enough rows to overflow a pipe buffer, so the writer sees the reader go away.
    const dir = path.join(work, 'big');
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'flow.yaml'), 'target: big\nkeys: id\nsequenceBy: ts\n');
    writeFileSync(path.join(dir, 'big.ndjson'), ndjson(Array.from({ length: 20000 }, (_, i) => ({ id: i, ts: 1, name: `name number ${i} with some padding text` }))));
    await libApply(path.join(dir, 'flow.yaml'), [path.join(dir, 'big.ndjson')]);
    const child = spawn(process.execPath, [SCD, 'export', 'flow.yaml', '--format', 'ndjson'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const first = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d))));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(first).toMatch(/^\{"id":0,/);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.js:\d+/);
    expect(code === 0 || code === null || code === 141).toBe(true);
  });
});

describe('exit codes', () => {
  it('0 on success, non-zero with one scd: line on errors', async () => {
    const { work } = project('exit');
    expect((await scd(['apply', '../proj/flow.yaml', '--input', '../proj/changes/001_initial.ndjson'], work)).code).toBe(0);
    const cases: string[][] = [
      ['apply', '../proj/flow.yaml', '--input', 'nope.ndjson'],
      ['export', 'no-such-flow.yaml'],
      ['apply', '../proj/flow.yaml', '--input', '../proj/flow.yaml'], // not a data file
    ];
    for (const args of cases) {
      const r = await scd(args, work);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(errorLines(r.stderr), args.join(' ') + '\n' + r.stderr).toHaveLength(1);
      expect(r.stderr).toMatch(/^scd: /m);
      expect(r.stderr).not.toMatch(/bug in scdkit/);
    }
    const unknown = await scd(['frobnicate'], work);
    expect(unknown.code).not.toBe(0);
  });

  it('a missing input names the path as given and says nothing was applied', async () => {
    const { proj, work } = project('missing');
    const r = await scd(['apply', '../proj/flow.yaml', '--input', 'missing/file.ndjson'], work);
    expect(r.code).toBe(1);
    expect(errorLines(r.stderr)).toEqual([expect.stringContaining('missing/file.ndjson')]);
    expect(existsSync(path.join(proj, 'accounts.duckdb'))).toBe(false);
  });
});
