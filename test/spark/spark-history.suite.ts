/**
 * History on Spark + Delta reads Delta's own change data feed and time travel (docs/SPARK.md
 * "History"): `scd changes`, `scd export --version` and `scd log` give what they give on DuckDB
 * for the same batches, and the log maps each commit to the target's Delta version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, changesQuery, type Driver, defineFlow, readCommitLog, readRows, versionQuery } from '../../src/index.js';
import { engines, sparkEngine } from '../engines.js';

const flow = defineFlow({
  target: 'dim_hist',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op', 'seq'],
  trackHistory: ['city'],
  schemaEvolution: 'add-columns',
});
const up = (id: number, name: string, city: string, seq: number) => ({ id, name, city, seq, op: 'U' });
const del = (id: number, seq: number) => ({ id, name: null, city: null, seq, op: 'D' });
const batches = [
  [up(1, 'Ann', 'Goa', 10), up(2, 'Bob', 'Pune', 10)],
  // in order: a tracked change (close + insert), an untracked one (update in place), a new key
  [up(1, 'Ann', 'Delhi', 20), up(2, 'Bobby', 'Pune', 20), up(3, 'Cy', 'Agra', 20)],
  // late: inside id 1's [10, 20)
  [up(1, 'Ann', 'Mumbai', 15)],
  // a late delete and an in-order one
  [del(1, 17), del(2, 30)],
  // a new column: the versions before it read it as null
  [{ ...up(3, 'Cy', 'Agra', 40), tier: 'gold' }],
];

const sorted = (rows: Array<Record<string, unknown>>) => rows.map((r) => JSON.stringify(r)).sort();

describe.skipIf(!sparkEngine)('history on Spark + Delta equals DuckDB (SCD_TEST_SPARK_URL)', { timeout: 600_000 }, () => {
  let spark: Driver;
  let duck: Driver;
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
    for (const b of batches) {
      await applyRows(spark, flow, b);
      await applyRows(duck, flow, b);
    }
  }, 600_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
  });

  it('scd changes: the same rows per commit as DuckDB, stamped with the commit times of its own log', async () => {
    const read = async (d: Driver) => readRows(d, await changesQuery(d, flow, 1));
    const onSpark = await read(spark);
    const onDuck = await read(duck);
    const withoutTime = (rows: Array<Record<string, unknown>>) => rows.map(({ _commit_timestamp, ...r }) => r);
    expect(withoutTime(onSpark)).toEqual(withoutTime(onDuck));
    expect(onSpark.length).toBeGreaterThan(8);
    const times = new Map((await readCommitLog(spark, flow)).map((c) => [c.version, c.committedAt]));
    for (const r of onSpark) expect(new Date(String(r._commit_timestamp)).toISOString()).toBe(times.get(Number(r._commit_version)));
    // A range reads only its commits.
    const second = await readRows(spark, await changesQuery(spark, flow, 2, 2));
    expect(withoutTime(second)).toEqual(withoutTime(onDuck.filter((r) => r._commit_version === 2)));
  });

  it('scd export --version N: the target as commit N left it, as on DuckDB, for every N (a column added later null before it)', async () => {
    for (let n = 1; n <= batches.length; n++) {
      const onSpark = await readRows(spark, await versionQuery(spark, flow, n));
      const onDuck = await readRows(duck, await versionQuery(duck, flow, n));
      expect(sorted(onSpark), `commit ${n}`).toEqual(sorted(onDuck));
    }
  });

  it('scd log: each commit with the Delta version of the target after it (VERSION AS OF that version is the target then)', async () => {
    const log = await readCommitLog(spark, flow);
    expect(log.map((c) => c.version)).toEqual([5, 4, 3, 2, 1]);
    const versions = log.map((c) => c.deltaVersion);
    expect(versions.every((v) => typeof v === 'number')).toBe(true);
    expect([...versions].reverse()).toEqual([...versions].reverse().sort((a, b) => a! - b!));
    expect(new Set(versions).size).toBe(5);
    expect((await readCommitLog(duck, flow))[0]!.deltaVersion).toBeUndefined();
    // Where it is not shown (scd status, the range check of scd changes), the Delta history is not read.
    const withoutHistory = await readCommitLog(spark, flow, undefined, { engineVersions: false });
    expect(withoutHistory.map((c) => c.version)).toEqual([5, 4, 3, 2, 1]);
    expect(withoutHistory.every((c) => c.deltaVersion === undefined)).toBe(true);
    const at2 = await spark.query(`SELECT count(*) AS n FROM dim_hist VERSION AS OF ${log.find((c) => c.version === 2)!.deltaVersion}`);
    expect(Number(at2[0]!.n)).toBe((await readRows(duck, await versionQuery(duck, flow, 2))).length);
  });
});
