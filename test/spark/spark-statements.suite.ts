/**
 * A Spark commit's fixed cost is its round trips: every plan the client sends (statements of the
 * plan, the lease, reads pinned to the commit's start, the commit label, dropping the commit's
 * views), counted where the client starts each one. A commit sends at most 20 (docs/PERFORMANCE.md
 * "Spark + Delta" has today's counts, in order and with late events), so that a change that adds
 * round trips beyond it fails and must say why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planRefusal } from '../../src/dialects/spark/plan-refusals.js';
import { LOCKS_TABLE } from '../../src/dialects/spark/spark-lock.js';
import { applyRows, type Driver, defineFlow, readTargetWith } from '../../src/index.js';
import { sparkEngine } from '../engines.js';

/**
 * The ceilings: a commit's round trips stay within 20, in order and with late events. What
 * lowered them to today's counts (docs/PERFORMANCE.md "Spark + Delta"): the commit's scratch sent
 * with the next statement in one SQL script (scripts.ts; docs/decisions/0086-a-spark-commits-scratch-goes-in-sql-scripts.md)
 * and the lease ended by the commit record (docs/decisions/0076-a-spark-lease-ends-with-the-commit-record.md);
 * the records have the counts before and after.
 */
const CEILING = 20;
/** The holder's renewal of its lease (spark-lock.ts renew). */
const LEASE_RENEWAL = new RegExp(`^UPDATE ${LOCKS_TABLE} SET expires_at = `);
const LATE_CEILING = 20;

const flow = defineFlow({ name: 'budget', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd2' });
const base = Array.from({ length: 1000 }, (_, i) => ({ id: i, ts: 1, city: `c${i}` }));
const inOrder = Array.from({ length: 10 }, (_, i) => ({ id: i * 7, ts: 2, city: `moved${i}` }));
const late = Array.from({ length: 10 }, (_, i) => ({ id: i * 11, ts: 0, city: `before${i}` }));

/**
 * Every plan the driver's client sends from now on (its SQL), and the statements among them: a
 * plan sent again after Spark's optimizer refused one (plan-refusals.ts: the rules left out by a
 * setting, the views the refused script made listed, its statements sent again one at a time) is
 * the same statement, not another; such retries are rare and logged.
 */
function countPlans(driver: Driver): { sent: string[]; statements: () => number } {
  const sent: string[] = [];
  const refused: string[] = [];
  let retries = 0;
  const client = (driver as unknown as { client: Record<string, (...a: unknown[]) => unknown> }).client;
  const start = client.startPlan!.bind(client);
  client.startPlan = (sql: unknown, ...rest: unknown[]) => {
    const text = String(sql);
    const again = refused.length > 0 && (/spark\.sql\.optimizer\.excludedRules|^SHOW VIEWS/.test(text) || refused.some((r) => r.includes(text)));
    if (again) retries++;
    sent.push(text);
    return start(sql, ...rest);
  };
  for (const m of ['execute', 'query'] as const) {
    const send = client[m]!.bind(client);
    client[m] = async (sql: unknown, ...rest: unknown[]) => {
      try {
        return await send(sql, ...rest);
      } catch (e) {
        if (planRefusal(e)) refused.push(String(sql));
        throw e;
      }
    };
  }
  return {
    sent,
    statements: () => {
      if (retries) console.log(`spark: ${retries} plans sent again after the optimizer refused a plan`);
      // A lease renewal is sent every RENEW_MS of the commit's time, not by its plan: how many a
      // commit sends follows the machine's speed, so they are not counted (spark-lock.ts).
      const renewals = sent.filter((sql) => LEASE_RENEWAL.test(sql)).length;
      if (renewals) console.log(`spark: ${renewals} lease renewals sent while the commit worked (not counted)`);
      return sent.length - retries - renewals;
    },
  };
}

describe.skipIf(!sparkEngine)('round trips of a Spark commit (SCD_TEST_SPARK_URL)', { timeout: 900_000 }, () => {
  let driver: Driver;
  beforeAll(async () => {
    driver = await sparkEngine!.open();
    await applyRows(driver, flow, base);
  }, 900_000);
  afterAll(async () => driver?.close());

  it(`10 events in order onto 1,000 versions: at most ${CEILING} statements sent (${LATE_CEILING} for late events), and the target is right`, async () => {
    const first = countPlans(driver);
    const r = await applyRows(driver, flow, inOrder);
    // What the first commit sent (the first recorder goes on recording the second's too).
    const firstSent = [...first.sent];
    console.log(`spark: 10 events in order: ${first.statements()} statements`);
    expect(r.eventsApplied).toBe(10);
    expect(first.statements()).toBeLessThanOrEqual(CEILING);
    const second = countPlans(driver);
    const s = await applyRows(driver, flow, late);
    console.log(`spark: 10 late events: ${second.statements()} statements`);
    expect(s.eventsApplied).toBe(10);
    expect(second.statements()).toBeLessThanOrEqual(LATE_CEILING);
    const rows = await readTargetWith(driver, flow);
    expect(rows.length).toBe(1020);
    // The log's append: with the target's and the key state's writes where every key is simple
    // (nothing reads the log after it), before the walk's scratch where keys are walked.
    const at = (sent: string[], pattern: RegExp) => sent.findIndex((sql) => pattern.test(sql));
    const append = /INSERT INTO \S*`_scd_dim_events`/;
    expect(at(first.sent, append)).toBeGreaterThan(at(first.sent, /CACHE TABLE `_scd_simple`/));
    expect(at(first.sent, append)).toBeGreaterThan(-1);
    expect(at(second.sent, append)).toBeGreaterThan(-1);
    expect(at(second.sent, append)).toBeLessThan(at(second.sent, /CACHE TABLE `_scd_events`/));
    // The commit's scratch goes once, after its writes and before its record: a write by name
    // looks through every cached plan (docs/decisions/
    // 0095-a-commits-scratch-goes-before-its-record-on-delta.md).
    for (const sent of [firstSent, second.sent]) {
      const drops = sent.filter((sql) => /DROP VIEW/.test(sql));
      expect(drops).toHaveLength(1);
      expect(at(sent, /DROP VIEW/)).toBeGreaterThan(at(sent, /MERGE INTO \S*`dim`/));
      expect(at(sent, /DROP VIEW/)).toBeLessThan(at(sent, /INSERT INTO `_scd_commits`/));
    }
  });

  it('the target closes versions with deletion vectors: its MERGE rewrites no file of unchanged rows', async () => {
    const props = await driver.query('SHOW TBLPROPERTIES `dim`');
    const prop = (k: string) => props.find((p) => p.key === k)?.value;
    expect(prop('delta.enableDeletionVectors')).toBe('true');
    expect(prop('delta.enableChangeDataFeed')).toBe('true');
    // The in-order commit's target MERGE closed 10 versions: marked by deletion vectors, their
    // files not rewritten. (Spark Connect gives a map as a list of key/value pairs.)
    const metricsOf = (h: Record<string, unknown>) => new Map((h.operationMetrics as Array<{ key: string; value: string }>).map((m) => [m.key, Number(m.value)]));
    const merges = (await driver.query('DESCRIBE HISTORY `dim`')).filter((h) => h.operation === 'MERGE').map(metricsOf);
    const closing = merges.filter((m) => (m.get('numTargetRowsUpdated') ?? 0) > 0);
    expect(closing.length).toBeGreaterThan(0);
    for (const m of closing) {
      expect(m.get('numTargetDeletionVectorsAdded')).toBeGreaterThan(0);
      expect(m.get('numTargetRowsCopied')).toBe(0);
    }
  });
});
