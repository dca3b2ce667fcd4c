/**
 * The plan branches on a dialect's capabilities, never on its name: a fourth engine brings its own
 * mix (transactions without row ids, as Snowflake or DuckLake would; no IGNORE NULLS; no DISTINCT
 * ON). The scenarios run on DuckDB with capabilities switched off, so each mix the plan can meet
 * has run, not only the three engines' own sets.
 */
import { afterAll, expect } from 'vitest';
import type { Dialect, DialectCapabilities } from '../../src/dialects/dialect.js';
import { type Driver, openDriver } from '../../src/index.js';
import { scenarioSuite } from '../scenario-suite.js';

/**
 * A DuckDB driver whose dialect says it lacks `off` (so the plan writes the SQL for engines without
 * them); every statement it is sent is added to `sent`.
 */
async function duckdbWithout(sent: string[], off: Partial<DialectCapabilities>, dialect: Partial<Dialect> = {}): Promise<Driver> {
  const driver = await openDriver(':memory:');
  const base = driver.dialect;
  Object.defineProperty(driver, 'dialect', { value: { ...base, ...dialect, capabilities: { ...base.capabilities, ...off } } });
  const run = driver.run.bind(driver);
  const query = driver.query.bind(driver);
  driver.run = (sql, params) => {
    sent.push(sql);
    return run(sql, params);
  };
  driver.query = (sql, params) => {
    sent.push(sql);
    return query(sql, params);
  };
  return driver;
}

function mix(name: string, never: RegExp, off: Partial<DialectCapabilities>, dialect: Partial<Dialect> = {}) {
  const sent: string[] = [];
  return { name, never, sent, open: () => duckdbWithout(sent, off, dialect) };
}

const mixes = [
  // Rows found by identity only: no row id to delete or fetch by.
  mix('duckdb with transactions but no row ids or DISTINCT ON', /DISTINCT ON|\browid\b/i, { rowIds: false, distinctOn: false }, { fetchByRowId: undefined }),
  // The ignoreNullUpdates walk groups numbered rows; scratch is made anew, never changed in place.
  mix('duckdb without IGNORE NULLS or scratch changed in place', /IGNORE NULLS/i, { ignoreNullsInWindows: false, temporaryTables: false }),
];

for (const mix of mixes) scenarioSuite(mix);

/** The DuckDB driver's own file reading (its staging tables): DuckDB's SQL whatever the plan's capabilities. */
const DRIVER_STAGING = /"?_scd_(lines|part)_\d/;

// The switched-off capabilities were obeyed: the plan never sent the SQL that needs them.
afterAll(() => {
  for (const mix of mixes) {
    expect(mix.sent.length, mix.name).toBeGreaterThan(1000);
    expect(
      mix.sent.filter((sql) => mix.never.test(sql) && !DRIVER_STAGING.test(sql)),
      mix.name,
    ).toEqual([]);
  }
});
