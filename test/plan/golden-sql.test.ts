import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { applyRows, defineFlow, type Driver, type FlowInput } from '../../src/index.js';
import { engines, sparkEngine, type TestEngine } from '../engines.js';
import { recordStatements } from './recorded-statements.js';
import { FixtureTape, readFixture, storedForm, writeFixture } from './replay/fixture.js';
import { recordingDriver, replayingDriver, type GoldenDialect } from './replay/replaying-driver.js';
import { statementText } from './replay/statement-text.js';

/**
 * Golden SQL: the statements of a 10-event commit onto an existing target, as each dialect writes
 * them (DuckDB, PostgreSQL, Spark), for a handful of flows. A change to the SQL a commit sends
 * shows here, in review, as a diff of test/plan/golden/<dialect>-<flow>.sql.
 *
 * No database runs them: each dialect's real driver answers from a fixture of what its engine
 * answered (test/plan/fixtures/<dialect>-<flow>.json, replay/). A statement the fixture lacks
 * fails the test with the nearest recorded one: the SQL changed, and the fixture is recorded again.
 * DuckDB's and PostgreSQL's fixtures are checked against the engines themselves (in memory, and
 * PGlite) on every run, so that they cannot drift from what the engines answer.
 *
 * - `UPDATE_GOLDEN=1 npx vitest run test/plan/golden-sql.test.ts` writes the golden files anew.
 * - `RECORD_FIXTURES=1 npx vitest run test/plan/golden-sql.test.ts` records DuckDB's and
 *   PostgreSQL's fixtures anew (PGlite; the PostgreSQL server sends the same statements).
 * - Spark's are recorded with a Spark Connect server (`node scripts/spark.mjs start` prints its URL):
 *   `RECORD_FIXTURES=1 SCD_TEST_SPARK_URL=sc://127.0.0.1:15002 npx vitest run test/plan/golden-sql.test.ts -t spark`
 *
 * The clock stands still at FROZEN while a commit runs, recorded or replayed: the time a commit
 * records and its duration are then the same on every run (they are parameters, or Spark's literals).
 */
const here = path.dirname(fileURLToPath(import.meta.url));

const flows: Record<string, FlowInput> = {
  scd2: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd2' },
  scd1: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd1' },
  tracked: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', trackHistory: ['city'] },
  ignoreNulls: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', ignoreNullUpdates: true },
  tuple: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: ['ts', 'n'] },
  tombstones: { name: 'golden', target: 'dim', keys: ['id'], sequenceBy: 'ts', applyAsDeletes: "op = 'D'", exceptColumns: ['op'], deletes: 'tombstone' },
};

const base = Array.from({ length: 100 }, (_, i) => ({ id: i, ts: 10, n: 0, city: `c${i}`, tier: 'a', op: 'U' }));
/** Ten events: in order, one late, one delete, one repeated, one with a null city. */
const batch = [
  ...Array.from({ length: 6 }, (_, i) => ({ id: i * 3, ts: 20, n: 1, city: `moved${i}`, tier: 'b', op: 'U' })),
  { id: 40, ts: 5, n: 1, city: 'late', tier: 'a', op: 'U' },
  { id: 41, ts: 20, n: 1, city: 'c41', tier: 'a', op: 'D' },
  { id: 42, ts: 20, n: 1, city: 'c42', tier: 'a', op: 'U' },
  { id: 43, ts: 20, n: 1, city: null, tier: 'c', op: 'U' },
];

const FROZEN = new Date('2026-01-02T03:04:05.678Z');
const record = !!process.env.RECORD_FIXTURES;

/** The golden text of a flow's commit on `driver`: the statements of the batch, applied after the base. */
async function commitStatements(driver: Driver, input: FlowInput): Promise<string> {
  const flow = defineFlow(input);
  vi.useFakeTimers({ toFake: ['Date'], now: FROZEN });
  try {
    await applyRows(driver, flow, base);
    const statements = recordStatements(driver);
    await applyRows(driver, flow, batch);
    return statements.map(statementText).join(';\n') + ';\n';
  } finally {
    vi.useRealTimers();
  }
}

const goldenFile = (dialect: GoldenDialect, name: string) => path.join(here, 'golden', `${dialect}-${name}.sql`);
const fixtureFile = (dialect: GoldenDialect, name: string) => path.join(here, 'fixtures', `${dialect}-${name}.json`);

for (const dialect of ['duckdb', 'postgres', 'spark'] as const) {
  describe(`golden SQL of a commit (${dialect}), answered from fixtures`, () => {
    for (const [name, input] of Object.entries(flows)) {
      it(`${name}: the statements of a 10-event commit are the golden ones`, async () => {
        const file = fixtureFile(dialect, name);
        const origin = `${path.relative(process.cwd(), file)} (RECORD_FIXTURES=1: test/plan/golden-sql.test.ts says how)`;
        const tape = new FixtureTape(readFixture(file), origin);
        const text = await commitStatements(replayingDriver(dialect, tape), input).catch((e: unknown) => {
          throw tape.firstMiss ? new Error(tape.firstMiss, { cause: e }) : e;
        });
        if (process.env.UPDATE_GOLDEN) writeFileSync(goldenFile(dialect, name), text);
        expect(text).toBe(readFileSync(goldenFile(dialect, name), 'utf8'));
      });
    }
  });
}

/** The engines the fixtures are recorded from: DuckDB and PGlite always, Spark when recording with a server. */
const live: Array<{ dialect: GoldenDialect; engine: TestEngine }> = [
  ...engines.filter((e) => e.name === 'duckdb' || e.name === 'pglite').map((engine) => ({ dialect: engine.name === 'duckdb' ? ('duckdb' as const) : ('postgres' as const), engine })),
  ...(record && sparkEngine ? [{ dialect: 'spark' as const, engine: sparkEngine }] : []),
];

for (const { dialect, engine } of live) {
  describe(`the ${dialect} fixtures are what ${engine.name} answers`, () => {
    for (const [name, input] of Object.entries(flows)) {
      it(`${name}: the engine answers the commit's statements as recorded`, { timeout: engine.remote ? 600_000 : 60_000 }, async () => {
        const driver = await engine.open();
        let text: string;
        const recorder = recordingDriver(dialect, driver);
        try {
          text = await commitStatements(driver, input);
        } finally {
          await driver.close();
        }
        const recorded = storedForm({ dialect, entries: recorder.entries });
        if (record) writeFixture(fixtureFile(dialect, name), recorded);
        expect(recorded).toEqual(readFixture(fixtureFile(dialect, name)));
        expect(text).toBe(readFileSync(goldenFile(dialect, name), 'utf8'));
      });
    }
  });
}
