import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyRows, defineFlow, keyHistoryQuery, openDriver, writeRows } from '../../src/index.js';
import { engines } from '../engines.js';
import { tempDir } from '../helpers.js';

for (const engine of engines) {
  describe(`${engine.name}: show in every output format`, () => {
    it('writes one key’s versions with _changed as csv and parquet files', async () => {
      const flow = defineFlow({ target: 'dim_show', keys: 'id', sequenceBy: 'ts' });
      const driver = await engine.open();
      const { dir, cleanup } = tempDir();
      try {
        await applyRows(driver, flow, [
          { id: 1, city: 'Pune', name: 'A', ts: 1 },
          { id: 1, city: 'Delhi', name: 'A', ts: 2 },
          { id: 2, city: 'Goa', name: 'B', ts: 1 },
        ]);
        const csv = path.join(dir, 'show.csv');
        await writeRows(driver, await keyHistoryQuery(driver, flow, { id: '1' }), { format: 'csv', out: csv });
        expect(readFileSync(csv, 'utf8').trim().split('\n')).toEqual([
          'id,city,name,ts,__START_AT,__END_AT,_changed,_ties',
          '1,Pune,A,1,1,2,(first),0',
          '1,Delhi,A,2,2,,"city, ts",0',
        ]);
        const pq = path.join(dir, 'show.parquet');
        await writeRows(driver, await keyHistoryQuery(driver, flow, { id: '1' }), { format: 'parquet', out: pq });
        // The parquet file is read back with DuckDB, whichever engine wrote it.
        const duck = await openDriver(':memory:');
        try {
          const rows = await duck.query(`SELECT city, _changed FROM read_parquet('${pq}') ORDER BY "__START_AT"`);
          expect(rows).toEqual([
            { city: 'Pune', _changed: '(first)' },
            { city: 'Delhi', _changed: 'city, ts' },
          ]);
        } finally {
          await duck.close();
        }
      } finally {
        await driver.close();
        cleanup();
      }
    });
  });
}
