/**
 * Every driver sends each SQL string as exactly one statement (DuckDB: a prepared statement;
 * PostgreSQL and PGlite: the extended protocol): a string that holds two is refused, and neither
 * of its statements runs, whichever method sends it and whether or not it has parameters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Driver, QueryError } from '../../src/index.js';
import { engines } from '../engines.js';

for (const engine of engines) {
  describe(`${engine.name}: one statement per string`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await engine.open();
      await driver.run('CREATE TABLE victim (i INTEGER)');
      await driver.run('INSERT INTO victim VALUES (42)');
    });
    afterAll(() => driver.close());

    const two = `INSERT INTO victim VALUES (1); DROP TABLE victim`;
    const sends: Array<[string, (sql: string) => Promise<unknown>]> = [
      ['run', (sql) => driver.run(sql)],
      ['run with a parameter', (sql) => driver.run(sql.replace('(1)', '(CAST($1 AS INTEGER))'), [1])],
      ['query', (sql) => driver.query(sql)],
      ['streamText', (sql) => driver.streamText(sql, [], () => undefined)],
      ['describe', (sql) => driver.describe(`SELECT 1 AS x) s; ${sql}; SELECT * FROM (SELECT 1 AS x`)],
    ];
    for (const [name, send] of sends)
      it(`${name}: two statements are refused and neither runs`, async () => {
        const e = await send(two).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e).toBeInstanceOf(QueryError);
        expect(await driver.query('SELECT i FROM victim ORDER BY i')).toEqual([{ i: 42 }]);
      });

    it('a statement with a trailing ";" is still one statement', async () => {
      expect(await driver.query('SELECT 1 AS one;')).toEqual([{ one: 1 }]);
    });

    it('a transaction is not ended by a statement that holds COMMIT', async () => {
      await expect(
        driver.transaction(async () => {
          await driver.run('INSERT INTO victim VALUES (7)');
          await driver.run('SELECT 1; COMMIT').catch(() => undefined);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await driver.query('SELECT i FROM victim ORDER BY i')).toEqual([{ i: 42 }]);
    });
  });
}
