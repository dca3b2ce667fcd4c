import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Two tiers (CONTRIBUTING.md, docs/decisions/0320-two-test-tiers.md):
 *
 * - `fast` (`npm test`): every test that runs inside the test process on the embedded engines
 *   (DuckDB, PGlite) — unit tests, the golden SQL of every dialect replayed without a database, the
 *   behavioural suite and the property tests with 15% of their cases. No server is used even
 *   when one is configured.
 * - `engines` (`npm run test:engines`): the whole suite on every engine configured
 *   (SCD_TEST_POSTGRES_URL, SCD_TEST_SPARK_URL), with the full property runs, plus what only this
 *   tier runs (ENGINE_TIER_ONLY): tests that start `bin/scd` processes, a browser, crash loops, or
 *   need a server by nature.
 */
const ENGINE_TIER_ONLY = [
  // bin/scd as child processes: the smoke tests, exit codes, signals, the files and folders a
  // command leaves, two processes at once, the package as npm installs it.
  'test/e2e/bin-smoke.test.ts',
  'test/e2e/cli-apply.test.ts',
  'test/e2e/cli-new-user.test.ts',
  'test/e2e/disk-full.test.ts',
  'test/e2e/expression-failures.test.ts',
  'test/e2e/landing-paths.test.ts',
  'test/e2e/one-process.test.ts',
  'test/e2e/package-files.test.ts',
  'test/e2e/terminal-escapes.test.ts',
  'test/e2e/two-processes.test.ts',
  'test/properties/scd-processes.test.ts',
  'test/sources/landing.test.ts',
  // In-process, but long (many applies each): the fast tier has their cheaper neighbours.
  'test/e2e/cli-messages.test.ts',
  'test/e2e/landing-identity.test.ts',
  'test/e2e/name-limits.test.ts',
  'test/e2e/untrusted-sql.test.ts',
  'test/sources/beyond-double.test.ts',
  'test/sources/engines-agree.test.ts',
  'test/sources/record-size-limit.test.ts',
  // Every scenario again on DuckDB with capabilities switched off, twice; the fast tier pins each
  // dialect's SQL instead (golden SQL, the capabilities' unit tests).
  'test/flows/capability-mixes.test.ts',
  'test/safety/row-id-names.test.ts',
  // Crash loops: a process killed at every write.
  'test/sources/crash.test.ts',
  // scd serve and the browser that drives it.
  'test/serve/applies-while-serving.test.ts',
  'test/serve/browser.test.ts',
  'test/serve/busy-file.test.ts',
  'test/serve/cli.test.ts',
  'test/serve/layout.test.ts',
  // Servers: PostgreSQL, Spark Connect (and the fake servers of the Spark protocol tests).
  'test/postgres/**',
  'test/spark/server.test.ts',
  'test/spark/protocol.test.ts',
  'test/spark/spark-lease.test.ts',
];

/**
 * The Spark tests are one long file (test/spark/server.test.ts: one Spark session at a time); it
 * goes first, so that the rest of the suite runs beside it on the other worker. Left to vitest,
 * a fresh clone (no timings cached) orders files by size, and that small file would start last.
 */
class SparkFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const spark = (f: TestSpecification) => f.moduleId.endsWith('/test/spark/server.test.ts');
    return [...sorted.filter(spark), ...sorted.filter((f) => !spark(f))];
  }
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each worker runs its files one after another in one process, without importing every module
    // anew for each file (vitest's per-file isolation): each test opens its own database (a fresh
    // file, :memory:, or a fresh schema of the shared PGlite or server) and puts back what it
    // changes in process.env; what scdkit keeps per process (DuckDB instances) is per database
    // (docs/decisions/0066-tests-without-per-file-isolation.md).
    isolate: false,
    // Both cores: the suite is mostly engine work, one worker per core.
    maxWorkers: 2,
    sequence: { sequencer: SparkFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: ENGINE_TIER_ONLY,
          // Empty: no server, whatever the shell says. FC_RUNS scales every property's cases.
          env: { SCD_TEST_POSTGRES_URL: '', SCD_TEST_SPARK_URL: '', FC_RUNS: process.env.FC_RUNS ?? '0.15' },
        },
      },
      {
        extends: true,
        test: {
          name: 'engines',
          include: ['test/**/*.test.ts'],
        },
      },
    ],
  },
});
