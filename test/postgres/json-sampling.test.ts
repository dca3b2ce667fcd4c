/**
 * PostgreSQL infers JSON column types from a sample of the records, checked against every record
 * (docs/DECISIONS.md "typed from a sample, then checked"): the types must be those that counting
 * every record gives, and a file the sample describes must not be counted whole.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver } from '../../src/dialects/driver.js';
import { JSON_SAMPLE } from '../../src/dialects/postgres/postgres-stage.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';
import { N, regular } from '../json-records.js';

const pgEngines = engines.filter((e) => e.name !== 'duckdb');


/** A last record unlike every record the sample sees. */
const late: Record<string, Record<string, unknown>> = {
  'integer, then a fraction': { id: N, n: 1.5 },
  'integer, then a text': { id: N, n: 'abc' },
  'integer, then one beyond 64 bits': { id: N, n: 2 ** 70 },
  // Written out in full (JSON.stringify gives 2 ** 70 an exponent): see `written` below.
  'integer, then one beyond 64 bits in full': { id: N, n: '@@12345678901234567890@@' },
  'boolean, then a text': { id: N, b: 'yes' },
  'text, then a number': { id: N, s: 5 },
  'date, then a timestamp': { id: N, d: '2024-01-01T10:00:00' },
  'date, then one of another format': { id: N, d: '2024-1-01' },
  'timestamp, then one with a zone': { id: N, t: '2024-01-01T10:00:00+02:00' },
  'a key the sample never saw': { id: N, fresh: 7 },
};

for (const engine of pgEngines) {
  describe(`${engine.name}: JSON types from a sample`, () => {
    const { dir, cleanup } = tempDir();
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
    });
    afterAll(async () => {
      await driver.close();
      cleanup();
    });

    /** Stage the records; the column types and whether every record was counted for them. */
    async function staged(name: string, records: Array<Record<string, unknown>>) {
      const file = path.join(dir, `${name.replace(/\W+/g, '_')}.ndjson`);
      // A string '@@digits@@' is written as the bare number: integers beyond what JS numbers hold.
      const written = records.map((r) => JSON.stringify(r).replace(/"@@(\d+)@@"/g, '$1'));
      writeFileSync(file, written.join('\n') + '\n');
      const sent: string[] = [];
      const query = driver.query.bind(driver);
      driver.query = async (sql: string, params?: unknown[]) => (sent.push(sql), query(sql, params));
      try {
        await driver.stageFiles([{ path: file, format: 'ndjson', label: 'f' }], '_t', '_r');
      } finally {
        driver.query = query;
      }
      const types = Object.fromEntries(((await driver.columns('_t')) ?? []).map((c) => [c.name, c.type]));
      const counted = sent.some((s) => s.includes('jsonb_each') && !s.includes(`LIMIT ${JSON_SAMPLE}`));
      return { types, counted };
    }

    it('a file the sample describes is not counted whole, and gets the types of a short file', async () => {
      const long = await staged('regular', Array.from({ length: N }, (_, i) => regular(i)));
      const short = await staged('regular_short', Array.from({ length: 100 }, (_, i) => regular(i)));
      expect(short.counted).toBe(true);
      expect(long.counted).toBe(false);
      expect(long.types).toEqual(short.types);
      expect(long.types).toMatchObject({ id: 'bigint', n: 'bigint', x: 'double precision', b: 'boolean', s: 'text', d: 'date' });
    });

    // The sample's size decides only whether every record is counted, never the types.
    for (const [name, odd] of Object.entries(late)) {
      it(`${name} just after PostgreSQL's sample (${JSON_SAMPLE} records), inside DuckDB's: typed as when every record is counted`, async () => {
        const records = Array.from({ length: N }, (_, i) => regular(i));
        records[JSON_SAMPLE + 1] = { ...odd, id: JSON_SAMPLE + 1 };
        const long = await staged(`${name}_early`, records);
        const short = await staged(`${name}_early_short`, [...Array.from({ length: 100 }, (_, i) => regular(i)), odd]);
        expect(long.counted).toBe(true);
        expect(long.types).toEqual(short.types);
      });
    }

    for (const [name, last] of Object.entries(late)) {
      it(`${name} after ${N - 1} records: typed as when every record is counted`, async () => {
        const long = await staged(name, [...Array.from({ length: N - 1 }, (_, i) => regular(i)), last]);
        const short = await staged(`${name}_short`, [...Array.from({ length: 100 }, (_, i) => regular(i)), last]);
        expect(long.counted).toBe(true);
        expect(long.types).toEqual(short.types);
      });
    }
  });
}
