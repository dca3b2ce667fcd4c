/**
 * A commit on Delta is several Delta commits (docs/SPARK.md "Commits without transactions"): a
 * failure between any two of its writes must leave the target at the previous scdkit commit, and
 * the next apply must redo the interrupted one, neither losing nor doubling an event. Reads change
 * nothing stored, so the states a failure can leave are those after each write: the client fails
 * here right after its k-th write, for every k of a commit (the undo of the last attempt's writes
 * counted among them), applying the same batch again each time. The end must be what DuckDB
 * builds from the same batch without failures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, changesQuery, type Driver, defineFlow, readCommitLog, readRows, readTargetWith } from '../../src/index.js';
import { storeNames } from '../../src/store/names.js';
import { engines, sparkEngine } from '../engines.js';
import { base, batch, type CrashRecord, ev, sorted } from './crash-batches.js';
import { failsAfterWrite } from './fail-after-write.js';

const flow = defineFlow({
  target: 'dim_crash',
  keys: 'id',
  sequenceBy: 'seq',
  applyAsDeletes: "op = 'D'",
  exceptColumns: ['op'],
  // A record with a null key is quarantined: every commit also writes the quarantine.
});
/**
 * Batch k with every key simple (one event each, after all it had: a change, a delete, a new key,
 * a bad record): nothing reads the log after its append, which goes with the target's and the key
 * state's writes (docs/decisions/0091-the-logs-append-with-the-writes-when-nothing-reads-it.md).
 */
const simpleBatch = (k: number) => [ev(1, `simple-${k}`, 1000 + 10 * k), ev(4, '', 1000 + 10 * k, 'D'), ev(20 + k, `new-${k}`, 1000 + 10 * k), ev(null, `bad-${k}`, 1000)];

/**
 * One batch, applied to Spark again and again: attempt k fails right after its k-th write (the
 * undo of the previous attempt's writes counted among them), until an attempt has no k-th write.
 * DuckDB gets the same commits without failures. Returns how many writes an attempt failed after,
 * and whether the last of them was the commit record.
 */
async function failAtEveryWrite(spark: Driver, duck: Driver, rows: CrashRecord[]): Promise<{ points: number; lastIsRecord: boolean }> {
  let points = 0;
  let lastIsRecord = false;
  await applyRows(duck, flow, rows);
  for (let k = 1; ; k++) {
    const before = (await readCommitLog(spark, flow)).length;
    if (!(await failsAfterWrite(spark, k, () => applyRows(spark, flow, rows)))) break;
    points = k;
    // A failure after the commit record leaves a whole commit: the next attempt is a replay.
    if ((await readCommitLog(spark, flow)).length > before) {
      lastIsRecord = true;
      await applyRows(duck, flow, rows);
    }
  }
  return { points, lastIsRecord };
}

describe.skipIf(!sparkEngine)('a failure between any two writes of a Spark commit (SCD_TEST_SPARK_URL)', { timeout: 1_800_000 }, () => {
  let spark: Driver;
  let duck: Driver;
  let mixed = { points: 0, lastIsRecord: false };
  let simple = { points: 0, lastIsRecord: false };
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
    await applyRows(spark, flow, base);
    await applyRows(duck, flow, base);
    mixed = await failAtEveryWrite(spark, duck, batch(1));
    // A batch whose keys are all simple: the log's append is among the writes at once.
    simple = await failAtEveryWrite(spark, duck, simpleBatch(2));
  }, 1_800_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
  });

  it('fails at every write of a commit (events, quarantine, key state, target, commit record)', () => {
    expect(mixed.points).toBeGreaterThanOrEqual(5);
    expect(mixed.lastIsRecord).toBe(true);
    // A batch of simple keys: the same writes, the log's among the ones at once.
    expect(simple.points).toBeGreaterThanOrEqual(5);
    expect(simple.lastIsRecord).toBe(true);
  });

  it('ends with the target DuckDB builds without failures', async () => {
    expect(sorted(await readTargetWith(spark, flow))).toEqual(sorted(await readTargetWith(duck, flow)));
  });

  it('with the same change feed, each change once (a redone commit adds nothing twice)', async () => {
    const rows = async (d: Driver) => (await readRows(d, await changesQuery(d, flow, 1))).map(({ _commit_timestamp, _commit_version, ...r }) => r);
    expect(sorted(await rows(spark))).toEqual(sorted(await rows(duck)));
  });

  it('with every event logged once and every bad record quarantined once', async () => {
    const count = async (d: Driver, table: string) => Number((await d.query(`SELECT count(*) AS n FROM ${d.dialect.quote(table)}`))[0]!.n);
    const names = storeNames(flow.target);
    expect(await count(spark, names.events)).toBe(await count(duck, names.events));
    expect(await count(spark, names.quarantine)).toBe(await count(duck, names.quarantine));
  });
});

describe.skipIf(!sparkEngine)("a failure between any two writes of a target's first Spark commit (SCD_TEST_SPARK_URL)", { timeout: 1_800_000 }, () => {
  const first = defineFlow({ target: 'dim_first', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });
  let spark: Driver;
  let duck: Driver;
  const failedAt: number[] = [];
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
    await applyRows(duck, first, [...base, ...batch(1)]);
    // Attempt k fails right after its k-th write: scdkit's catalog, the target's tables, its flow
    // record. Until the record is there, the next attempt starts the creation over (the tables an
    // interrupted first commit made are dropped); after it, the target exists and the attempt is
    // an ordinary commit, whose failures the suite above covers: it has no k-th write, and ends,
    // or its k-th write was its commit record, and the commit is whole.
    for (let k = 1; ; k++) {
      if (!(await failsAfterWrite(spark, k, () => applyRows(spark, first, [...base, ...batch(1)])))) break;
      failedAt.push(k);
      if ((await readCommitLog(spark, first).catch(() => [])).length) break;
    }
  }, 1_800_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
  });

  it('fails after each write that makes the target (catalog, tables, flow record), and the next apply completes the commit', async () => {
    expect(failedAt.length).toBeGreaterThanOrEqual(5);
    expect(sorted(await readTargetWith(spark, first))).toEqual(sorted(await readTargetWith(duck, first)));
    expect((await readCommitLog(spark, first)).map((c) => c.version)).toEqual([1]);
  });
});

describe.skipIf(!sparkEngine)('a failure between any two writes of a Spark commit that adds a column (SCD_TEST_SPARK_URL)', { timeout: 1_800_000 }, () => {
  // The commit alters the tables (a column added to the log and the target), rewrites the flow
  // record and the live view, then writes as any commit: a failure after any of those writes must
  // leave the tables, the record and the view of one commit, never a mix.
  const evolving = defineFlow({ target: 'dim_evolve', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'], schemaEvolution: 'add-columns' });
  const withTier = batch(1).map((e, i) => ({ ...e, tier: `t${i}` }));
  let spark: Driver;
  let duck: Driver;
  /** The write each failed attempt failed right after. */
  const failedAfter: string[] = [];
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    duck = await engines.find((e) => e.name === 'duckdb')!.open();
    await applyRows(spark, evolving, base);
    await applyRows(duck, evolving, base);
    await applyRows(duck, evolving, withTier);
    for (let k = 1; ; k++) {
      const before = (await readCommitLog(spark, evolving)).length;
      const write = await failsAfterWrite(spark, k, () => applyRows(spark, evolving, withTier));
      if (write === undefined) break;
      failedAfter.push(write.replace(/\s+/g, ' '));
      if ((await readCommitLog(spark, evolving)).length > before) await applyRows(duck, evolving, withTier);
    }
  }, 1_800_000);
  afterAll(async () => {
    await spark?.close();
    await duck?.close();
  });

  it('fails after each write, the column added among them, and ends with the target, log and live view DuckDB builds', async () => {
    // Among the writes failed after (each attempt's count includes the undo's own writes): the
    // first column added (the target's not yet), the new flow record (no event written yet), the
    // key state (events written: the tables, their columns and the record are put back, and the
    // next attempt adds the column again), and the commit record.
    // Long enough for the schema's name before the table's (the test's schemas differ in length).
    const shown = failedAfter.map((w) => w.slice(0, 120));
    expect(shown[0]).toMatch(/^ALTER TABLE `_scd_dim_evolve_events` ADD COLUMN `tier`/);
    expect(shown).toEqual(
      expect.arrayContaining([expect.stringMatching(/^MERGE INTO `_scd_flows` f USING \(SELECT \$1 AS target/), expect.stringMatching(/^MERGE INTO \S*`_scd_dim_evolve_keys`/)]),
    );
    expect(shown.findIndex((w) => /_scd_dim_evolve_keys/.test(w))).toBeLessThan(shown.length - 1);
    expect(shown.at(-1)).toMatch(/^INSERT INTO `_scd_commits`/);
    expect(sorted(await readTargetWith(spark, evolving))).toEqual(sorted(await readTargetWith(duck, evolving)));
    const names = storeNames(evolving.target);
    const current = async (d: Driver) => sorted(await d.query(`SELECT id, city, tier FROM ${d.dialect.quote(names.current)}`));
    expect(await current(spark)).toEqual(await current(duck));
    const count = async (d: Driver) => Number((await d.query(`SELECT count(*) AS n FROM ${d.dialect.quote(names.events)} WHERE tier IS NOT NULL`))[0]!.n);
    expect(await count(spark)).toBe(await count(duck));
  });
});
