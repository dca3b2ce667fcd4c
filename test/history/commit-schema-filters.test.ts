/**
 * What the CLI's commands read, at the library level, on every engine: the commit log
 * in the ApplyResult's schema, export's --current and --where filters (a --where checked like a
 * flow expression, refused in one line otherwise), the range of `changes`, and `status`.
 */
import { describe, expect, it } from 'vitest';
import { applyRows, commitRange, type Driver, defineFlow, type Flow, filtered, flowStatus, readCommitLog, readRows, rebuild, ScdError, targetQuery } from '../../src/index.js';
import { engines } from '../engines.js';

const FLOW = defineFlow({ target: 'dim_acct', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });
const TOMBSTONES = defineFlow({ target: 'dim_tomb', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'], deletes: 'tombstone' });
const u = (id: number, tier: string, seq: number) => ({ id, tier, seq, op: 'U' });
const BATCHES = [
  [u(1, 'gold', 10), u(2, 'silver', 10), u(3, 'bronze', 11)],
  [u(1, 'platinum', 20), { id: 2, tier: null, seq: 21, op: 'D' }, u(4, 'gold', 22)],
];

async function withEngine(open: () => Promise<Driver>, fn: (driver: Driver) => Promise<void>): Promise<void> {
  const driver = await open();
  try {
    await fn(driver);
  } finally {
    await driver.close();
  }
}

async function refusal(p: Promise<unknown>): Promise<ScdError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ScdError);
  expect((e as ScdError).oneLine()).not.toMatch(/\n/);
  return e as ScdError;
}

const ids = (rows: Array<Record<string, unknown>>) => rows.map((r) => `${r.id}:${r.tier}`);

for (const engine of engines) {
  describe(`${engine.name}: the CLI's reads`, () => {
    it('the commit log is the ApplyResult of each commit, field for field (camelCase, inputs an array, expectations an object)', () =>
      withEngine(engine.open, async (driver) => {
        const results = [];
        // An apply's steps (its timings) are the result's, never stored: the log is the rest.
        for (const b of BATCHES) {
          const { steps, ...result } = await applyRows(driver, FLOW, b);
          expect(steps?.length).toBeGreaterThan(0);
          results.push(result);
        }
        results.push(await rebuild(driver, FLOW));
        const log = await readCommitLog(driver, FLOW);
        expect(log).toEqual([...results].reverse());
        expect(Object.keys(log[0]!)).toEqual(Object.keys(results[0]!));
        expect(Array.isArray(log[2]!.inputs)).toBe(true);
        expect(log[2]!.expectations).toEqual({});
      }));

    it('--current keeps live versions, --where a boolean over the target; both together', () =>
      withEngine(engine.open, async (driver) => {
        for (const b of BATCHES) await applyRows(driver, FLOW, b);
        const rows = async (filter: { current?: boolean; where?: string }, flow: Flow = FLOW) =>
          ids(await readRows(driver, await filtered(driver, flow, await targetQuery(driver, flow), filter)));
        expect(await rows({})).toEqual(['1:gold', '1:platinum', '2:silver', '3:bronze', '4:gold']);
        expect(await rows({ current: true })).toEqual(['1:platinum', '3:bronze', '4:gold']);
        expect(await rows({ where: "tier = 'gold'" })).toEqual(['1:gold', '4:gold']);
        expect(await rows({ where: "tier = 'gold'", current: true })).toEqual(['4:gold']);
        expect(await rows({ where: 'seq >= 11 AND "__END_AT" IS NULL' })).toEqual(['1:platinum', '3:bronze', '4:gold']);
        // A tombstone is a version, but not a live one.
        for (const b of BATCHES) await applyRows(driver, TOMBSTONES, b);
        expect(await rows({}, TOMBSTONES)).toHaveLength(6);
        expect(await rows({ current: true }, TOMBSTONES)).toEqual(['1:platinum', '3:bronze', '4:gold']);
      }));

    it('a --where that is not one boolean over the target is refused in one line, and runs nothing', () =>
      withEngine(engine.open, async (driver) => {
        for (const b of BATCHES) await applyRows(driver, FLOW, b);
        const base = await targetQuery(driver, FLOW);
        const refused = (where: string) => refusal(filtered(driver, FLOW, base, { where }));
        expect((await refused('(SELECT count(*) FROM dim_acct) > 0')).message).toMatch(/reads more than the target's row|not a single boolean/);
        expect((await refused('random() > 0.5')).message).toMatch(/reads more than the target's row/);
        expect((await refused('true; DROP TABLE dim_acct')).message).toMatch(/not a single boolean expression: it contains ";"/);
        expect((await refused('true) OR (1 = 1')).message).toMatch(/not a single boolean/);
        expect((await refused('tier')).message).toMatch(/not a boolean expression/);
        expect((await refused('nope = 1')).message).toMatch(/cannot be evaluated on the target/);
        expect((await refused('')).message).toMatch(/it is empty/);
        expect((await refused("tier = 'gold' -- comment")).message).toMatch(/comment/);
        expect((await refused('count(*) > 0')).message).toMatch(/reads more|cannot be evaluated|not a single/);
        // The table is untouched.
        expect(await readRows(driver, base)).toHaveLength(5);
      }));

    it("changes' range: defaults to every commit; by time; inverted or beyond the last commit refused in one line", () =>
      withEngine(engine.open, async (driver) => {
        const results = [];
        for (const b of [...BATCHES, [u(5, 'tin', 30)]]) {
          results.push(await applyRows(driver, FLOW, b));
          await new Promise((r) => setTimeout(r, 20)); // commits at distinct milliseconds
        }
        const at = results.map((r) => r.committedAt);
        expect(await commitRange(driver, FLOW, {})).toEqual({ from: 1, to: 3 });
        expect(await commitRange(driver, FLOW, { fromVersion: 2 })).toEqual({ from: 2, to: 3 });
        expect(await commitRange(driver, FLOW, { fromTimestamp: at[1], toTimestamp: at[1] })).toEqual({ from: 2, to: 2 });
        expect(await commitRange(driver, FLOW, { fromTimestamp: '2000-01-01', toTimestamp: at[1] })).toEqual({ from: 1, to: 2 });
        const later = new Date(Date.parse(at[0]!) + 1).toISOString();
        expect(await commitRange(driver, FLOW, { fromTimestamp: later })).toEqual({ from: 2, to: 3 });
        expect((await refusal(commitRange(driver, FLOW, { fromVersion: 3, toVersion: 2 }))).problem).toMatch(
          /^the range is inverted: from commit 3 to commit 2 \(commits are 1\.\.3/,
        );
        expect((await refusal(commitRange(driver, FLOW, { fromVersion: 4 }))).problem).toMatch(/^--from-version 4 is beyond the last commit \(commits are 1\.\.3/);
        expect((await refusal(commitRange(driver, FLOW, { toVersion: 7 }))).problem).toMatch(/^--to-version 7 is beyond the last commit/);
        expect((await refusal(commitRange(driver, FLOW, { fromTimestamp: '2999-01-01' }))).message).toMatch(/no commit was made at or after/);
        expect((await refusal(commitRange(driver, FLOW, { toTimestamp: '2000-01-01' }))).message).toMatch(/no commit was made at or before/);
        expect((await refusal(commitRange(driver, FLOW, { fromTimestamp: 'yesterday' }))).message).toMatch(/is not a time/);
        // Two times in order with no commit between them: said so, not "inverted".
        const t1 = new Date(Date.parse(at[0]!) + 1).toISOString();
        const t2 = new Date(Date.parse(at[1]!) - 1).toISOString();
        const none = (await refusal(commitRange(driver, FLOW, { fromTimestamp: t1, toTimestamp: t2 }))).message;
        expect(none.startsWith(`no commit was made between ${t1} and ${t2} (commits are 1..3`), none).toBe(true);
        expect(none).not.toContain('\n');
        expect((await refusal(commitRange(driver, FLOW, { fromTimestamp: t2, toTimestamp: t1 }))).problem).toMatch(
          /^the range is inverted: --from-timestamp .* is after --to-timestamp/,
        );
        expect((await refusal(commitRange(driver, FLOW, { fromVersion: 1, fromTimestamp: at[0] }))).message).toMatch(/not both/);
      }));

    it('status: rows, keys, current rows, last commit, quarantine and event log; nothing before the first apply', () =>
      withEngine(engine.open, async (driver) => {
        const before = await flowStatus(driver, FLOW);
        expect(before).toMatchObject({ target: 'dim_acct', engine: driver.dialect.name, applied: false, rows: 0, commits: 0 });
        expect(before.lastCommit).toBeUndefined();
        const results = [];
        for (const b of BATCHES) results.push(await applyRows(driver, FLOW, b));
        results.push(await applyRows(driver, FLOW, [{ id: null, tier: 'x', seq: 1, op: 'U' }])); // quarantined: a null key
        const s = await flowStatus(driver, FLOW);
        expect(s).toMatchObject({ applied: true, keys: ['id'], rows: 5, distinctKeys: 4, currentRows: 3, commits: 3, quarantined: 1, events: 6 });
        const { steps: _steps, ...lastResult } = results[2]!;
        expect(s.lastCommit).toEqual(lastResult);
        expect(s.pendingFiles).toBeUndefined(); // the flow has no source folder
      }));
  });
}
