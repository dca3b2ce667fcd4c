/**
 * What a commit tells its progress callback, on every engine: each step as it begins (reading,
 * mapping, recomputing, recording), and, when another commit holds the target, that it waits; the
 * commit's reported duration leaves that wait out. (Spark: test/spark/spark-lease.suite.ts.)
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { applyRows, type Driver, defineFlow, openDriver, rebuild } from '../../src/index.js';
import { engines, freshSchema } from '../engines.js';
import { tempDir } from '../helpers.js';

const flow = defineFlow({ target: 'dim_progress', keys: 'id', sequenceBy: 'ts', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] });
const rows = [
  { id: '9007199254740993', ts: '2025-01-01T00:00:00Z', v: 'Zoë', amount: '12.30', op: 'U' },
  { id: '9007199254740993', ts: '2025-01-01T05:30:00+05:30', v: null, amount: '-0.01', op: 'U' },
  { id: '2', ts: '2025-01-02T00:00:00.123456Z', v: '', amount: '1e2', op: 'D' },
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(engines)('a commit reports its steps ($name)', (engine) => {
  it('reading, mapping, recomputing, recording: in that order, with what each step works on', async () => {
    const driver = await engine.open();
    try {
      const told: string[] = [];
      await applyRows(driver, flow, rows, (m) => told.push(m));
      // Two keys had events (9007199254740993 and 2): both are recomputed.
      expect(told).toEqual(['reading (rows)', 'mapping 3 records to events', 'recomputing the history of 2 keys', 'recording commit 1']);
    } finally {
      await driver.close();
    }
  });
});

/** Two drivers of one database, one holding the target's lock for `holdMs` while the other commits (an apply of `rows`, or `commit`). */
async function waitedCommit(
  holder: Driver,
  applier: Driver,
  holdMs: number,
  commit = (progress: (m: string) => void) => applyRows(applier, flow, rows, progress),
  target = flow.target,
) {
  let held!: () => void;
  const locked = new Promise<void>((r) => (held = r));
  const holding = holder.transaction(async () => {
    await holder.lockTarget(target);
    held();
    await sleep(holdMs);
  });
  await locked;
  const told: string[] = [];
  const start = Date.now();
  const result = await commit((m) => told.push(m));
  const wall = Date.now() - start;
  await holding;
  return { result, wall, told };
}

const HOLD_MS = 3000;
const postgresUrl = process.env.SCD_TEST_POSTGRES_URL;
const shared: Array<{ name: string; open: () => Promise<[Driver, Driver, () => Promise<void>]> }> = [
  {
    name: 'duckdb',
    open: async () => {
      const dir = tempDir('scdkit-progress-');
      const file = path.join(dir.dir, 'scd.duckdb');
      const a = await openDriver(file);
      const b = await openDriver(file);
      return [
        a,
        b,
        async () => {
          await a.close();
          await b.close();
          dir.cleanup();
        },
      ];
    },
  },
  ...(postgresUrl
    ? [
        {
          name: 'postgres',
          open: async (): Promise<[Driver, Driver, () => Promise<void>]> => {
            const schema = freshSchema();
            const a = await PostgresDriver.connect(postgresUrl, { schema, dropSchemaOnClose: true });
            const b = await PostgresDriver.connect(postgresUrl, { schema });
            return [
              a,
              b,
              async () => {
                await b.close();
                await a.close();
              },
            ];
          },
        },
      ]
    : []),
];

// PGlite is one connection, whose locks are its own: two of its drivers never wait for each other.
describe.each(shared)('a commit that waits for another holds its wait out of its duration ($name)', (engine) => {
  const opened: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of opened) await close();
  });
  it(`says it waits, and reports a duration without the ${HOLD_MS} ms wait`, async () => {
    const [holder, applier, close] = await engine.open();
    opened.push(close);
    const { result, wall, told } = await waitedCommit(holder, applier, HOLD_MS);
    expect(told[0]).toBe('reading (rows)');
    expect(told.find((m) => m.startsWith('waiting for target'))).toMatch(/^waiting for target "dim_progress" in .*: another scdkit commit is changing it/);
    expect(wall).toBeGreaterThanOrEqual(HOLD_MS - 100);
    expect(result.durationMs).toBeLessThanOrEqual(wall - HOLD_MS + 500);
    expect(result.eventsApplied).toBe(3);
    // A rebuild is a commit too: its wait is left out the same way.
    const numbered = defineFlow({ target: 'dim_rebuilt', keys: 'id', sequenceBy: 'seq' });
    await applyRows(applier, numbered, [
      { id: '9007199254740993', seq: 1, v: 'a' },
      { id: '9007199254740993', seq: 2, v: 'b' },
    ]);
    const rebuilt = await waitedCommit(holder, applier, HOLD_MS, (progress) => rebuild(applier, numbered, progress), numbered.target);
    expect(rebuilt.told[0]).toMatch(/^waiting for target "dim_rebuilt"/);
    expect(rebuilt.result.durationMs).toBeLessThanOrEqual(rebuilt.wall - HOLD_MS + 500);
  });
});
