/**
 * A dry run (plan/dry-run.ts): the commit runs whole in a transaction that is rolled back. The
 * target, the commit log, the quarantine, the change feed, the key state and the landing files'
 * records are exactly as before; the statements it sent include the target's INSERT; the result
 * is the one the real commit then has, under the same commit number (nothing was consumed).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { type ApplyResult, applyRows, applySourceWith, type Driver, defineFlow, dryRun, type Flow, ScdError } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

const FLOW = { target: 'dim_dry', keys: 'id', sequenceBy: 'seq' };
const FIRST = [
  { id: 1, v: 'a', seq: 1 },
  { id: 2, v: 'b', seq: 1 },
  { id: null, v: 'no key', seq: 1 },
];
const SECOND = [
  { id: 1, v: 'a2', seq: 2 },
  { id: 3, v: 'c', seq: 2 },
  { id: 2, v: 'b', seq: 1 },
  { id: null, v: 'no key again', seq: 2 },
];

/** Every stored table of the flow (and the catalog), each as its rows, in a stable order; undefined where it does not exist. */
async function everything(driver: Driver, flow: Flow): Promise<Record<string, string[] | undefined>> {
  const names = storeNames(flow.target);
  const out: Record<string, string[] | undefined> = {};
  for (const table of [names.target, names.events, names.quarantine, names.changes, names.state, names.commits, names.flows, names.files]) {
    if (!(await driver.columns(table))) {
      out[table] = undefined;
      continue;
    }
    const rows = await driver.query(`SELECT * FROM ${driver.dialect.quote(table)}`);
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** A commit's result without what differs between two runs of it (its time and duration). */
function counts(r: ApplyResult): Omit<ApplyResult, 'committedAt' | 'durationMs' | 'steps'> {
  const { committedAt: _at, durationMs: _ms, steps: _steps, ...rest } = r;
  return rest;
}

/** The statement that writes the target's new rows. */
const insertsTarget = (sql: string) => sql.trimStart().startsWith('INSERT INTO "dim_dry"');

for (const engine of engines) {
  describe(`dry run (${engine.name})`, () => {
    it('changes nothing, records the statements, and the real apply after it is the same commit', async () => {
      const flow = defineFlow(FLOW);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, FIRST);
        const before = await everything(driver, flow);
        const run = await dryRun(driver, (d) => applyRows(d, flow, SECOND));
        expect(run.dryRun).toBe(true);
        expect(run.result).toMatchObject({ version: 2, rowsRead: 4, eventsApplied: 2, duplicates: 1, quarantined: 1, versionsAdded: 2, versionsClosed: 1 });
        expect(await everything(driver, flow)).toEqual(before);
        expect(
          run.statements.some((s) => insertsTarget(s.sql)),
          "the target's INSERT is among the statements",
        ).toBe(true);
        expect(
          run.statements.some((s) => s.sql.includes('"_scd_commits"') && s.sql.trimStart().startsWith('INSERT')),
          "the commit's log entry too",
        ).toBe(true);
        // Nothing consumed: the real commit is commit 2, and does what the dry run said.
        const real = await applyRows(driver, flow, SECOND);
        expect(counts(real)).toEqual(counts(run.result));
        expect(await everything(driver, flow)).not.toEqual(before);
      } finally {
        await driver.close();
      }
    });

    it('the first commit of a target: the target is not created, and the real apply is commit 1', async () => {
      const flow = defineFlow(FLOW);
      const driver = await engine.open();
      try {
        const run = await dryRun(driver, (d) => applyRows(d, flow, FIRST));
        expect(run.result).toMatchObject({ version: 1, eventsApplied: 2, quarantined: 1, versionsAdded: 2 });
        expect(
          run.statements.some((s) => /^CREATE TABLE "dim_dry"/.test(s.sql.trimStart())),
          "the target's CREATE TABLE is among the statements",
        ).toBe(true);
        expect(run.statements.some((s) => insertsTarget(s.sql))).toBe(true);
        const after = await everything(driver, flow);
        for (const table of ['dim_dry', '_scd_dim_dry_events', '_scd_dim_dry_quarantine', '_scd_dim_dry_changes', '_scd_dim_dry_keys', '_scd_files'])
          expect(after[table], `${table} was not created`).toBeUndefined();
        // The catalog (made before the commit's transaction, as any first apply makes it) stays empty.
        expect(after._scd_commits).toEqual([]);
        expect(after._scd_flows).toEqual([]);
        expect((await applyRows(driver, flow, FIRST)).version).toBe(1);
      } finally {
        await driver.close();
      }
    });

    it('a landing folder: no file is recorded as applied; the real apply then applies them all', async () => {
      const dir = path.join(tmp.dir, `landing-${engine.name}`);
      (await import('node:fs')).mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'a.ndjson'), FIRST.map((r) => JSON.stringify(r)).join('\n') + '\n');
      writeFileSync(path.join(dir, 'b.ndjson'), SECOND.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const flow = defineFlow({ ...FLOW, source: { path: dir } });
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, [{ id: 9, v: 'z', seq: 0 }]);
        const before = await everything(driver, flow);
        const run = await dryRun(driver, (d) => applySourceWith(d, flow));
        expect(run.result.results.map((r) => [r.version, r.inputs.map((f) => path.basename(f))])).toEqual([[2, ['a.ndjson', 'b.ndjson']]]);
        expect(
          run.statements.some((s) => s.sql.includes('"_scd_files"') && s.sql.trimStart().startsWith('INSERT')),
          "the files' records are among the statements",
        ).toBe(true);
        const after = await everything(driver, flow);
        // The table of applied files may be made (empty) by the listing, before the transaction.
        expect(after._scd_files ?? []).toEqual([]);
        expect({ ...after, _scd_files: undefined }).toEqual({ ...before, _scd_files: undefined });
        // With one commit per file, a dry run would plan the second on a state it did not keep.
        const each = await dryRun(driver, (d) => applySourceWith(d, flow, { each: true })).catch((e: unknown) => e);
        expect(each).toBeInstanceOf(ScdError);
        expect((each as ScdError).code).toBe('USAGE');
        expect((await everything(driver, flow))._scd_files ?? []).toEqual([]);
        const real = await applySourceWith(driver, flow);
        expect(real.results.map((r) => r.version)).toEqual([2]);
        expect(counts(real.results[0]!)).toEqual(counts(run.result.results[0]!));
        expect((await everything(driver, flow))._scd_files).toHaveLength(2);
      } finally {
        await driver.close();
      }
    });

    it('a commit that fails fails the same way in a dry run, and changes nothing', async () => {
      const flow = defineFlow(FLOW);
      const driver = await engine.open();
      try {
        await applyRows(driver, flow, FIRST);
        const before = await everything(driver, flow);
        const changed = defineFlow({ ...FLOW, keys: ['id', 'v'] });
        const e = await dryRun(driver, (d) => applyRows(d, changed, SECOND)).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(ScdError);
        expect((e as ScdError).message).toContain('the flow changed (keys)');
        expect(await everything(driver, flow)).toEqual(before);
        expect((await applyRows(driver, flow, SECOND)).version).toBe(2);
      } finally {
        await driver.close();
      }
    });
  });
}

describe('dry run on an engine without transactions', () => {
  it('is refused before the commit runs anything', async () => {
    let ran = false;
    const sent: string[] = [];
    const driver = { dialect: sparkDialect, location: 'sc://spark', run: async (sql: string) => void sent.push(sql) } as unknown as Driver;
    const e = await dryRun(driver, async (d) => {
      ran = true;
      await d.run('DELETE FROM t');
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ScdError);
    expect((e as ScdError).code).toBe('USAGE');
    expect((e as ScdError).problem).toBe('a dry run rolls its commit back, and spark has no transactions to roll back');
    expect([ran, sent]).toEqual([false, []]);
  });
});
