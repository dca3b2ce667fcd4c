/**
 * `scd serve` on Spark + Delta (no scdkit feed table there: the key page reads Delta's change data
 * feed, as `scd changes` does): the README example applied, every page fetched over HTTP, the
 * same checks as on DuckDB (readme-pages.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Driver } from '../../src/index.js';
import { sparkEngine } from '../engines.js';
import { applyReadmeBatches, checkReadmePages } from './readme-pages.js';

describe.skipIf(!sparkEngine)('scd serve on Spark + Delta (SCD_TEST_SPARK_URL)', { timeout: 600_000 }, () => {
  let spark: Driver;
  beforeAll(async () => {
    spark = await sparkEngine!.open();
    await applyReadmeBatches(spark);
  }, 600_000);
  afterAll(async () => {
    await spark?.close();
  });

  it('every page answers 200; 501 page names the commit that made and ended each version; a gap only where the key was deleted', async () => {
    await checkReadmePages(spark);
  }, 600_000);
});
