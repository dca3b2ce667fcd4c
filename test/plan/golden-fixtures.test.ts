import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engines, sparkEngine, type TestEngine } from '../engines.js';
import { fixtureFile, goldenCommit, goldenFile, goldenFlows } from './golden-commit.js';
import { readFixture, storedForm, writeFixture } from './replay/fixture.js';
import { type GoldenDialect, recordingDriver } from './replay/replaying-driver.js';

/**
 * The fixtures golden-sql.test.ts renders the golden SQL from are what the engines answer: the
 * golden commit is run on DuckDB (in memory) and PGlite, each answer recorded and compared with
 * the stored fixture, and its statements with the golden file. A fixture cannot drift from its
 * engine unseen.
 *
 * `RECORD_FIXTURES=1` writes them instead (golden-sql.test.ts says how); with SCD_TEST_SPARK_URL it
 * records Spark's too (a Spark server is not started for the check alone: recording is the check).
 */
const record = !!process.env.RECORD_FIXTURES;

const live: Array<{ dialect: GoldenDialect; engine: TestEngine }> = [
  ...engines
    .filter((e) => e.name === 'duckdb' || e.name === 'pglite')
    .map((engine) => ({ dialect: engine.name === 'duckdb' ? ('duckdb' as const) : ('postgres' as const), engine })),
  ...(record && sparkEngine ? [{ dialect: 'spark' as const, engine: sparkEngine }] : []),
];

for (const { dialect, engine } of live) {
  describe(`the ${dialect} fixtures are what ${engine.name} answers`, () => {
    for (const [name, input] of Object.entries(goldenFlows)) {
      it(`${name}: the engine answers the golden commit's statements as recorded`, { timeout: engine.remote ? 600_000 : 60_000 }, async () => {
        const driver = await engine.open();
        const recorder = recordingDriver(dialect, driver);
        let text: string;
        try {
          text = await goldenCommit(driver, input);
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
