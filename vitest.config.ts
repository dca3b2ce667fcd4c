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
    // Both cores: the suite is mostly engine work, one worker per core.
    maxWorkers: 2,
    sequence: { sequencer: SparkFirst },
  },
});
