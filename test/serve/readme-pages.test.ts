/**
 * `scd serve` over the README example on DuckDB and PostgreSQL (PGlite): every page answers
 * without an error, and the key page names the commit that made each version (readme-pages.ts;
 * spark-serve.suite.ts runs the same checks on Spark).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Driver } from '../../src/index.js';
import { engines } from '../engines.js';
import { applyReadmeBatches, checkReadmePages } from './readme-pages.js';

for (const engine of engines) {
  describe(`${engine.name}: scd serve over the README example`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
      await applyReadmeBatches(driver);
    });
    afterAll(async () => {
      await driver?.close();
    });

    it('every page answers 200; 501 page names the commit that made and ended each version; a gap only where the key was deleted', async () => {
      await checkReadmePages(driver);
    });
  });
}
