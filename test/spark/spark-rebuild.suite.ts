/**
 * `scd rebuild` and `scd compact` on Spark + Delta (docs/SPARK.md "Rebuild and compaction"): each a
 * commit like an apply's, under the target's lease, each write labelled, the target changed by one
 * MERGE, the record last. The same flows give DuckDB's target, counts and change feed; a flow
 * change that needs the log re-derived overwrites the log in one Delta write; one that would change
 * the target's columns is refused before anything is written; a rebuild or a compaction
 * interrupted after any write is undone by the next commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, compact, type Driver, defineFlow, type FlowInput, latestVersion, readTargetWith, rebuild, ScdError } from '../../src/index.js';
import { engines, sparkEngine } from '../engines.js';
import { feed } from '../history/fixtures/history.js';
import { failsAfterWrite } from './fail-after-write.js';

const NAMES: FlowInput = { target: 'dim_rb', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op', 'seq'], trackHistory: ['city'] };
const up = (id: number, name: string, city: string, seq: number) => ({ id, name, city, seq, op: 'U' });
const BATCHES = [
  [up(1, 'Ann', 'Goa', 1), up(2, 'Bob', 'Pune', 1)],
  [up(1, 'Anna', 'Goa', 2), up(2, 'Bob', 'Agra', 3)],
  [up(1, 'Anna', 'Delhi', 3), { id: 2, name: null, city: null, seq: 4, op: 'D' }],
];
// The log re-derived: `op` was a column, now also what makes a delete (the target's columns stay).
const RELOG: FlowInput = { target: 'dim_rl', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq', 'op'] };
const RELOG_EVENTS = [
  { id: 1, v: 'a', seq: 1, op: 'U' },
  { id: 1, v: null, seq: 2, op: 'D' },
  { id: 2, v: 'b', seq: 1, op: 'U' },
];

const counts = (r: object) => {
  const { version, operation, keysChanged, versionsAdded, versionsChanged, versionsRemoved, versionsClosed } = r as Record<string, unknown>;
  return { version, operation, keysChanged, versionsAdded, versionsChanged, versionsRemoved, versionsClosed };
};

describe.skipIf(!sparkEngine)('scd rebuild on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let spark: Driver;
  let duck: Driver;
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
  }, 300_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
  });

  it('trackHistory changed: the target, counts and change feed DuckDB gives; applies go on after it', async () => {
    const old = defineFlow(NAMES);
    const now = defineFlow({ ...NAMES, trackHistory: undefined });
    for (const d of [spark, duck]) for (const b of BATCHES) await applyRows(d, old, b);
    await expect(applyRows(spark, now, [up(1, 'Ann', 'Delhi', 5)])).rejects.toThrow(/rebuild/);
    const onSpark = await rebuild(spark, now);
    const onDuck = await rebuild(duck, now);
    expect(counts(onSpark)).toEqual(counts(onDuck));
    expect(onSpark).toMatchObject({ version: 4, operation: 'rebuild', versionsAdded: 1, versionsChanged: 1 });
    expect(await readTargetWith(spark, now)).toEqual(await readTargetWith(duck, now));
    const sorted = (rows: object[]) => rows.map((r) => JSON.stringify(r)).sort();
    expect(sorted(await feed(spark, now, 4))).toEqual(sorted(await feed(duck, now, 4)));
    expect(await feed(spark, now, 4)).toHaveLength(3);
    // The rebuilt key state decides the next commit: a late event is placed, a new one appended.
    for (const d of [spark, duck]) await applyRows(d, now, [up(1, 'Ann', 'Mumbai', 2.5), up(3, 'Cy', 'Agra', 6)]);
    expect(await readTargetWith(spark, now)).toEqual(await readTargetWith(duck, now));
    expect(await latestVersion(spark, now)).toBe(5);
  });

  it('applyAsDeletes added: the log is re-derived in one write, and a replay is still a duplicate', async () => {
    const old = defineFlow(RELOG);
    const now = defineFlow({ ...RELOG, applyAsDeletes: "op = 'D'" });
    for (const d of [spark, duck]) await applyRows(d, old, RELOG_EVENTS);
    const onSpark = await rebuild(spark, now);
    expect(counts(onSpark)).toEqual(counts(await rebuild(duck, now)));
    expect(await readTargetWith(spark, now)).toEqual([
      { id: 1, v: 'a', __START_AT: 1, __END_AT: 2 },
      { id: 2, v: 'b', __START_AT: 1, __END_AT: null },
    ]);
    const again = await applyRows(spark, now, RELOG_EVENTS);
    expect([again.eventsApplied, again.duplicates, again.versionsAdded]).toEqual([0, 3, 0]);
  });

  it("a flow change that would change the target's columns is refused before anything is written", async () => {
    const input: FlowInput = { target: 'dim_rs', keys: 'id', sequenceBy: 'seq', exceptColumns: ['seq', 'phone'] };
    const flow = defineFlow(input);
    await applyRows(spark, flow, [{ id: 1, city: 'Goa', phone: '1', seq: 1 }]);
    const before = await readTargetWith(spark, flow);
    const err = await rebuild(spark, defineFlow({ ...input, exceptColumns: ['seq'] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScdError);
    expect((err as ScdError).problem).toBe("scd rebuild cannot change the target's columns or identity on spark yet (this flow changes its columns)");
    expect((err as ScdError).fix).toMatch(/new `target` name/);
    expect(await latestVersion(spark, flow)).toBe(1);
    expect(await readTargetWith(spark, flow)).toEqual(before);
    // The lease went back: the next commit takes the target at once.
    expect((await applyRows(spark, flow, [{ id: 1, city: 'Agra', phone: '1', seq: 2 }])).version).toBe(2);
  });

  it('a rebuild failing after each of its writes is undone by the next one, which ends with the target DuckDB builds', async () => {
    // Rebuilt to and fro between two flows, each rebuild re-deriving the log: DuckDB's targets of each.
    const flows = [defineFlow({ ...RELOG, target: 'dim_rx' }), defineFlow({ ...RELOG, target: 'dim_rx', applyAsDeletes: "op = 'D'" })];
    for (const d of [spark, duck]) await applyRows(d, flows[0]!, RELOG_EVENTS);
    const expected: Array<Array<Record<string, unknown>>> = [];
    for (const f of [flows[1]!, flows[0]!]) {
      await rebuild(duck, f);
      expected.push(await readTargetWith(duck, f));
    }
    expect(expected[0]).not.toEqual(expected[1]);
    // Attempt k fails right after its k-th write (a rebuild's: the log overwritten, the key state
    // emptied, the key state and the target at once, the flow record, the commit record), until an
    // attempt has no k-th write; the next rebuild undoes an interrupted one and makes it whole.
    let version = 1;
    let failures = 0;
    for (let k = 1; ; k++) {
      const to = flows[k % 2]!;
      const failedAfter = await failsAfterWrite(spark, k, () => rebuild(spark, to));
      if (failedAfter !== undefined) failures++;
      if (failedAfter !== undefined && !/_scd_commits/.test(failedAfter)) await rebuild(spark, to);
      expect(await latestVersion(spark, to)).toBe(++version);
      expect(await readTargetWith(spark, to)).toEqual(expected[(k + 1) % 2]);
      if (failedAfter === undefined) break;
    }
    expect(failures).toBe(6);
  });

  it('scd compact: the folds DuckDB makes, the target unchanged, a later event older than the watermark quarantined; failed after each write, undone by the next', async () => {
    const flow = defineFlow({ target: 'dim_cp', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });
    const ev = (id: number, v: string, seq: number, op = 'U') => ({ id, v, seq, op });
    const events = [
      [ev(1, 'a', 1), ev(2, 'b', 1), ev(3, 'c', 1)],
      [ev(1, 'a2', 2), ev(2, 'b', 2), ev(3, 'c', 3, 'D')],
      [ev(1, 'a3', 4), ev(2, 'b2', 5), ev(3, 'c2', 6)],
      [ev(1, 'a4', 7), ev(2, 'b3', 8)],
    ];
    for (const d of [spark, duck]) for (const b of events) await applyRows(d, flow, b);
    const target = await readTargetWith(duck, flow);
    expect(await readTargetWith(spark, flow)).toEqual(target);
    // Attempt k fails right after its k-th write (a compaction's: the log in one MERGE, the flow
    // record's watermark, the commit record), until an attempt has no k-th write.
    let failures = 0;
    for (let k = 1, before = 2; ; k++, before++) {
      const failedAfter = await failsAfterWrite(spark, k, () => compact(spark, flow, String(before)));
      const onDuck = await compact(duck, flow, String(before));
      if (failedAfter !== undefined) failures++;
      if (failedAfter !== undefined && !/_scd_commits/.test(failedAfter)) {
        const onSpark = await compact(spark, flow, String(before));
        expect([onSpark.version, onSpark.eventsFolded, onSpark.eventsWritten]).toEqual([onDuck.version, onDuck.eventsFolded, onDuck.eventsWritten]);
      }
      expect(await latestVersion(spark, flow)).toBe(onDuck.version);
      expect(await readTargetWith(spark, flow)).toEqual(target);
      if (failedAfter === undefined) break;
    }
    expect(failures).toBe(3);
    // The watermark holds: a later event older than it is quarantined on both, and the rest agree.
    const late = [ev(1, 'too old', 1), ev(3, 'c3', 9)];
    const [s, k] = [await applyRows(spark, flow, late), await applyRows(duck, flow, late)];
    expect([s.quarantined, s.eventsApplied]).toEqual([k.quarantined, k.eventsApplied]);
    expect(s.quarantined).toBe(1);
    expect(await readTargetWith(spark, flow)).toEqual(await readTargetWith(duck, flow));
    // A rebuild after the compaction gives the same target.
    await rebuild(spark, flow);
    expect(await readTargetWith(spark, flow)).toEqual(await readTargetWith(duck, flow));
  });
});
