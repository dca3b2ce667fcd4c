import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Each worker runs its files one after another in one process, without importing every module
    // anew for each file (vitest's per-file isolation): each test opens its own database (a fresh
    // file, :memory:, or a fresh schema of the shared PGlite or server) and puts back what it
    // changes in process.env; what scdkit keeps per process (DuckDB instances) is per database.
    // The suite without Spark took 320 s against 415 s isolated (docs/decisions/0066-tests-without-per-file-isolation.md).
    isolate: false,
    // Both cores: the suite is mostly engine work, one worker per core.
    maxWorkers: 2,
    sequence: { sequencer: SparkFirst },
  },
});
