/**
 * The history commands through `node bin/scd` (needs `npm run build`): log --json, changes,
 * export --version, as-of, show, rebuild. Projects are written to a temp folder; the database is
 * a DuckDB file next to the flow.
 */

import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { applyFiles, applyRows, type Flow, type FlowInput, loadFlowFile, openDriver, readTargetWith, resolveInputs } from '../../src/index.js';
import { CUSTOMER_BATCHES, CUSTOMER_FLOW, CUSTOMER_TARGET, customerRow, writeProject } from './fixtures/customers.js';
import { assertBuilt, parseNdjson, pickLog, type Row, scd, scdOk, tempDir } from './fixtures/history.js';
import { LOG_BATCHES, LOG_EXPECTED, LOG_FEED_2, LOG_FLOW } from './fixtures/log-scenario.js';
import { TT_BATCHES, TT_FLOW, TT_STATES, ttRows } from './fixtures/timetravel.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  assertBuilt();
  tmp = tempDir();
});
afterAll(() => tmp?.cleanup());

function project(name: string, flow: FlowInput, batches: Row[][]) {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  return { dir, ...writeProject(dir, { ...flow, database: `${name}.duckdb` }, batches) };
}
/**
 * Apply one commit per batch (or per file, when given) on the project's database file, in-process
 * with one open; return the export after each commit.
 */
async function applyAll(flow: Flow, batches: Row[][], files?: string[]): Promise<Row[][]> {
  const driver = await openDriver(flow.database);
  try {
    const after: Row[][] = [];
    for (const [i, b] of batches.entries()) {
      if (files) await applyFiles(driver, flow, resolveInputs([files[i]!]));
      else await applyRows(driver, flow, b);
      after.push(await readTargetWith(driver, flow));
    }
    return after;
  } finally {
    await driver.close();
  }
}
const noTs = (rows: Row[]) => rows.map(({ _commit_timestamp, ...r }) => r);

// The three projects are independent (own folder, own database file): run them side by side.
describe('history commands through bin/scd', () => {
  it('`rebuild --json`, `log --json` (NDJSON, newest first), `log --format table`, `changes --from-version --to-version`', async ({ expect }) => {
    const p = project('log', LOG_FLOW, LOG_BATCHES);
    await applyAll(loadFlowFile(p.flowFile), LOG_BATCHES, p.files);
    const rebuilt = parseNdjson((await scdOk(['rebuild', p.flowFile, '--json'], p.dir)).stdout);
    expect(rebuilt).toHaveLength(1);
    expect(rebuilt[0]).toMatchObject({ version: 5, operation: 'rebuild', versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0 });

    const out = await scdOk(['log', p.flowFile, '--json'], p.dir);
    const lines = out.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const rows = lines.map((l) => JSON.parse(l) as Row); // every line is one JSON object
    // The ApplyResult's schema: camelCase names, inputs an array (docs/decisions/0045-the-clis-commit-schema.md).
    // The log's columns keep their first names (store/catalog.ts): the counts' fields map onto them.
    const stored: Record<string, string> = { keysChanged: 'keys_affected', versionsAdded: 'rows_inserted', versionsChanged: 'rows_updated', versionsRemoved: 'rows_deleted' };
    const snake = (r: Row) => Object.fromEntries(Object.entries(r).map(([k, v]) => [stored[k] ?? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
    expect(rows.map((r) => pickLog(snake(r)))).toEqual(LOG_EXPECTED);
    for (const r of rows) {
      expect(Number.isNaN(Date.parse(String(r.committedAt)))).toBe(false);
      expect(typeof r.durationMs).toBe('number');
    }
    expect(rows[4]!.inputs).toEqual([p.files[0]]);
    expect(rows[0]).toEqual(rebuilt[0]);

    // The readable form, like DESCRIBE HISTORY.
    const table = (await scdOk(['log', p.flowFile, '--format', 'table'], p.dir)).stdout;
    expect(table).toMatch(/^commit /);
    expect(table).toMatch(/rebuild/);
    expect(table.split('\n').filter((l) => /^\s*[1-5]\s/.test(l))).toHaveLength(5);

    // The change feed of commits 2..4: commit 2's rows, nothing for the replay (3), one insert (4).
    const ch = parseNdjson((await scdOk(['changes', p.flowFile, '--from-version', '2', '--to-version', '4', '--format', 'ndjson'], p.dir)).stdout);
    expect(Object.keys(ch[0]!)).toEqual(['id', 'v', 'seq', '__START_AT', '__END_AT', '_change_type', '_commit_version', '_commit_timestamp']);
    expect(noTs(ch)).toEqual([...LOG_FEED_2, { id: 2, v: 'b0', seq: 0, __START_AT: 0, __END_AT: 1, _change_type: 'insert', _commit_version: 4 }]);
  });

  it('`changes` and `export --version` through bin/scd show the values a version had, after it was rewritten in place (the feed stores added rows by reference)', async ({
    expect,
  }) => {
    // name is untracked: commit 2 rewrites [10,-) in place, commit 3 closes it and opens [14,-).
    const flow: FlowInput = { target: 'dim_ref', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq'], trackHistory: ['city'] };
    const batches = [[{ id: 1, name: 'Ann', city: 'Goa', seq: 10 }], [{ id: 1, name: 'Annie', city: 'Goa', seq: 12 }], [{ id: 1, name: 'Annie', city: 'Pune', seq: 14 }]];
    const p = project('ref', flow, batches);
    for (const f of p.files) await scdOk(['apply', p.flowFile, '--input', f], p.dir);
    const ch = noTs(parseNdjson((await scdOk(['changes', p.flowFile, '--from-version', '1', '--format', 'ndjson'], p.dir)).stdout));
    const row = (v: number, t: string, name: string, city: string, start: number, end: number | null) => ({
      id: 1,
      name,
      city,
      __START_AT: start,
      __END_AT: end,
      _change_type: t,
      _commit_version: v,
    });
    expect(ch).toEqual([
      row(1, 'insert', 'Ann', 'Goa', 10, null),
      row(2, 'update_preimage', 'Ann', 'Goa', 10, null),
      row(2, 'update_postimage', 'Annie', 'Goa', 10, null),
      row(3, 'update_preimage', 'Annie', 'Goa', 10, null),
      row(3, 'update_postimage', 'Annie', 'Goa', 10, 14),
      row(3, 'insert', 'Annie', 'Pune', 14, null),
    ]);
    const at = async (n: number) => parseNdjson((await scdOk(['export', p.flowFile, '--version', String(n), '--format', 'ndjson'], p.dir)).stdout);
    expect(await at(1)).toEqual([{ id: 1, name: 'Ann', city: 'Goa', __START_AT: 10, __END_AT: null }]);
    expect(await at(2)).toEqual([{ id: 1, name: 'Annie', city: 'Goa', __START_AT: 10, __END_AT: null }]);
  });

  it('`export --version N --format ndjson` prints the target exactly as exported right after commit N', async ({ expect }) => {
    const p = project('tt', TT_FLOW, TT_BATCHES);
    // What `scd export --format ndjson` printed after each commit (the e2e suite proves the two are the same text).
    const captured = (await applyAll(loadFlowFile(p.flowFile), TT_BATCHES)).map((rows) => rows.map((r) => JSON.stringify(r) + '\n').join(''));
    for (const n of [3, 4, 6]) {
      const out = await scdOk(['export', p.flowFile, '--version', String(n), '--format', 'ndjson'], p.dir);
      expect(out.stdout, `--version ${n}`).toBe(captured[n - 1]);
      expect(parseNdjson(out.stdout), `--version ${n}`).toEqual(ttRows(TT_STATES[n - 1]!));
    }
  });

  it('`as-of FLOW 2026-03-10` (boundary: the versions starting that day) and `show FLOW --key customer_id=501`', async ({ expect }) => {
    const p = project('customers', CUSTOMER_FLOW, CUSTOMER_BATCHES);
    const after = await applyAll(loadFlowFile(p.flowFile), CUSTOMER_BATCHES);
    expect(after.at(-1)).toEqual(CUSTOMER_TARGET.map(customerRow));

    const asOf = await scdOk(['as-of', p.flowFile, '2026-03-10', '--format', 'ndjson'], p.dir);
    expect(parseNdjson(asOf.stdout)).toEqual([customerRow(CUSTOMER_TARGET[1]!), customerRow(CUSTOMER_TARGET[3]!), customerRow(CUSTOMER_TARGET[5]!)]);

    const show = await scdOk(['show', p.flowFile, '--key', 'customer_id=501', '--format', 'ndjson'], p.dir);
    expect(parseNdjson(show.stdout)).toEqual([
      { ...customerRow(CUSTOMER_TARGET[0]!), _changed: '(first)', _ties: 0 },
      { ...customerRow(CUSTOMER_TARGET[1]!), _changed: 'city, effective_date', _ties: 0 },
      { ...customerRow(CUSTOMER_TARGET[2]!), _changed: 'customer_name, effective_date', _ties: 0 },
    ]);
  });

  it('`as-of FLOW "June 15"` (or a date the calendar lacks) and `compact --before` one: one line naming the value and the forms, exit 1', async ({ expect }) => {
    const p = project('times', CUSTOMER_FLOW, CUSTOMER_BATCHES);
    await applyAll(loadFlowFile(p.flowFile), CUSTOMER_BATCHES);
    const forms = '(fix: give 2025-06-15, 2025-06-15T09:00:00 or 2025-06-15T09:00:00Z)';
    for (const [at, why] of [
      ['June 15', ''],
      ['2025-13-45', ': there is no month 13'],
      ['2025-02-30', ': 2025-02 has 28 days'],
    ]) {
      const r = await scd(['as-of', p.flowFile, at!, '--format', 'ndjson'], p.dir);
      expect(r.code, at).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`scd: "${at}" is not a time${why} ${forms}\n`);
    }
    const c = await scd(['compact', p.flowFile, '--before', 'June 15'], p.dir);
    expect(c.code).toBe(1);
    expect(c.stderr).toBe(`scd: "June 15" is not a time ${forms}\n`);
    // The forms accepted: a date-time falls on its day of the date sequence.
    const day = (await scdOk(['as-of', p.flowFile, '2026-03-10', '--format', 'ndjson'], p.dir)).stdout;
    expect(parseNdjson(day)).toHaveLength(3);
    for (const at of ['2026-03-10T09:00:00', '2026-03-10 09:00:00.25', '2026-03-10T09:00:00Z', '2026-03-10T12:00:00+02:00'])
      expect((await scdOk(['as-of', p.flowFile, at, '--format', 'ndjson'], p.dir)).stdout, at).toBe(day);
  });
});
