/**
 * The hand-made scenarios (scenario-suite.ts) on every local engine. On Spark they run from
 * spark/server.test.ts, with the other tests that use the Spark server.
 */
import { engines } from './engines.js';
import { scenarioSuite } from './scenario-suite.js';

for (const engine of engines) scenarioSuite(engine);
