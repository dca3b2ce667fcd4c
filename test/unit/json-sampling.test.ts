/**
 * DuckDB stages NDJSON typed from a sample of its records, checked against every record
 * (docs/DECISIONS.md "NDJSON typed from a sample, then checked"): whatever the file, the staged
 * table must be what reading every record for types gives, and a file the sample describes must
 * not be read for types twice.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDriver } from '../../src/index.js';
import type { Driver, FileFormat } from '../../src/dialects/driver.js';
import { N, regular } from '../json-records.js';

const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-sampling-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


/** Files whose last record differs from every record the sample sees. */
const late: Record<string, Record<string, unknown>> = {
  'integer, then a fraction': { id: N, n: 1.5 },
  'integer, then a text': { id: N, n: 'abc' },
  'integer, then one too big': { id: N, n: 2 ** 70 },
  'boolean, then a text': { id: N, b: 'yes' },
  'text, then a number': { id: N, s: 5 },
  'text, then an object': { id: N, s: { a: 1 } },
  'date, then a timestamp': { id: N, d: '2024-01-01T10:00:00' },
  'date, then a text': { id: N, d: 'nope' },
  'timestamp, then one with a zone': { id: N, t: '2024-01-01T10:00:00+02:00' },
  'a key the sample never saw': { id: N, fresh: 7 },
};

function write(name: string, records: Array<Record<string, unknown>>): string {
  const file = path.join(dir, `${name.replace(/\W+/g, '_')}.ndjson`);
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

/** Stage `file` through the driver; the statements it sent, its table's types and rows. */
async function staged(driver: Driver, file: string, format: FileFormat = 'ndjson') {
  const sent: string[] = [];
  const run = driver.run.bind(driver);
  driver.run = async (sql: string, params?: unknown[]) => {
    sent.push(sql);
    return run(sql, params);
  };
  try {
    await driver.stageFiles([{ path: file, format, label: 'f' }], '_t', '_r');
  } finally {
    driver.run = run;
  }
  const from = `(SELECT * EXCLUDE (__scd_file, __scd_line) FROM _t)`;
  return { sent, ...(await shape(driver, from)) };
}

async function shape(driver: Driver, from: string) {
  const types = (await driver.query(`SELECT column_name AS c, column_type AS t FROM (DESCRIBE ${from}) ORDER BY c`)).map((r) => `${r.c}:${r.t}`);
  const rows = (await driver.query(`SELECT to_json(x)::VARCHAR AS j FROM ${from} x ORDER BY id`)).map((r) => String(r.j));
  return { types, rows };
}

describe('DuckDB: NDJSON typed from a sample', () => {
  it('a file the sample describes is read once for its types, as reading every record types it', async () => {
    const file = write('regular', Array.from({ length: N }, (_, i) => regular(i)));
    const driver = await openDriver(':memory:');
    try {
      const got = await staged(driver, file);
      expect(got.sent.some((s) => s.includes('sample_size = -1'))).toBe(false);
      const full = await shape(driver, `(SELECT * FROM read_json('${file}', sample_size = -1))`);
      expect(got.types).toEqual(full.types);
      expect(got.types).toContain('d:DATE');
      expect(got.types).toContain('t:TIMESTAMP');
      expect(got.rows).toEqual(full.rows);
      // Every record is numbered by its line in the file (record i is on line i + 1).
      const lines = await driver.query(`SELECT count(*) FILTER (WHERE __scd_line <> id + 1) AS bad, count(*) AS n FROM _t`);
      expect(lines).toEqual([{ bad: '0', n: String(N) }]);
    } finally {
      await driver.close();
    }
  });

  it('a JSON array is checked the same way (a late fraction makes every record count)', async () => {
    for (const [last, full] of [[regular(N), false], [{ id: N, n: 1.5 }, true]] as const) {
      const file = path.join(dir, `array_${full}.json`);
      writeFileSync(file, JSON.stringify([...Array.from({ length: N }, (_, i) => regular(i)), last]));
      const driver = await openDriver(':memory:');
      try {
        const { sent, ...got } = await staged(driver, file, 'json');
        expect(sent.some((x) => x.includes('sample_size = -1'))).toBe(full);
        expect(got).toEqual(await shape(driver, `(SELECT * FROM read_json('${file}', sample_size = -1))`));
      } finally {
        await driver.close();
      }
    }
  });

  for (const [name, last] of Object.entries(late)) {
    it(`${name} after ${N - 1} records: typed as from every record`, async () => {
      const file = write(name, [...Array.from({ length: N - 1 }, (_, i) => regular(i)), last]);
      const driver = await openDriver(':memory:');
      try {
        const got = await staged(driver, file);
        expect(got.sent.some((s) => s.includes('sample_size = -1'))).toBe(true);
        const full = await shape(driver, `(SELECT * FROM read_json('${file}', sample_size = -1))`);
        expect(got.types).toEqual(full.types);
        expect(got.rows).toEqual(full.rows);
      } finally {
        await driver.close();
      }
    });
  }
});
