import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureFile, goldenCommit, goldenFile, goldenFlows } from './golden-commit.js';
import { FixtureTape, readFixture } from './replay/fixture.js';
import { replayingDriver } from './replay/replaying-driver.js';

/**
 * Golden SQL: the statements of a 10-event commit onto an existing target, as each dialect writes
 * them (DuckDB, PostgreSQL, Spark), for a handful of flows (golden-commit.ts). A change to the SQL
 * a commit sends shows here, in review, as a diff of test/plan/golden/<dialect>-<flow>.sql.
 *
 * No database runs them: each dialect's real driver answers from a fixture of what its engine
 * answered (test/plan/fixtures/<dialect>-<flow>.json, replay/). A statement the fixture lacks
 * fails the test with the nearest recorded one: the SQL changed, and the fixture is recorded
 * again (golden-fixtures.test.ts, which also checks DuckDB's and PostgreSQL's against the engines).
 *
 * - `UPDATE_GOLDEN=1 npx vitest run test/plan/golden-sql.test.ts` writes the golden files anew.
 * - `RECORD_FIXTURES=1 npx vitest run test/plan/golden-fixtures.test.ts` records DuckDB's and
 *   PostgreSQL's fixtures anew (PGlite; the PostgreSQL server sends the same statements).
 * - Spark's are recorded with a Spark Connect server (`node scripts/spark.mjs start` prints its URL):
 *   `RECORD_FIXTURES=1 SCD_TEST_SPARK_URL=sc://127.0.0.1:15002 npx vitest run test/plan/golden-fixtures.test.ts -t spark`
 */
for (const dialect of ['duckdb', 'postgres', 'spark'] as const) {
  describe(`golden SQL of a commit (${dialect}), answered from fixtures`, () => {
    for (const [name, input] of Object.entries(goldenFlows)) {
      it(`${name}: the statements of a 10-event commit are the golden ones`, async () => {
        const file = fixtureFile(dialect, name);
        const tape = new FixtureTape(readFixture(file), `${path.relative(process.cwd(), file)} (test/plan/golden-sql.test.ts says how)`);
        const text = await goldenCommit(replayingDriver(dialect, tape), input).catch((e: unknown) => {
          throw tape.firstMiss ? new Error(tape.firstMiss, { cause: e }) : e;
        });
        if (process.env.UPDATE_GOLDEN) writeFileSync(goldenFile(dialect, name), text);
        expect(text).toBe(readFileSync(goldenFile(dialect, name), 'utf8'));
      });
    }
  });
}
