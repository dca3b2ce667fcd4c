/**
 * A Spark commit's scratch waits in the driver and goes with the next statement that needs the
 * server, as one SQL script (src/dialects/spark/scripts.ts). Unit tests against a recording client
 * (no server): what is sent, in which order, in how many round trips.
 */
import { describe, expect, it } from 'vitest';
import type { Row } from '../../src/dialects/driver.js';
import { deferrable, scriptable, sqlScript } from '../../src/dialects/spark/scripts.js';
import { SparkDriver } from '../../src/dialects/spark/spark-driver.js';

const refused = () =>
  new Error('query failed: [PLAN_VALIDATION_FAILED_RULE_IN_BATCH] Rule org.apache.spark.sql.catalyst.optimizer.PushDownPredicates in batch X generated an invalid plan');

/** A driver over a client that records every plan; `answer` gives each plan's rows or fails it. */
function recording(answer: (sql: string, as: 'execute' | 'query') => Row[] | Error = () => []) {
  const sent: Array<{ as: 'execute' | 'query'; sql: string }> = [];
  const reply = async (sql: string, as: 'execute' | 'query') => {
    sent.push({ as, sql });
    const out = answer(sql, as);
    if (out instanceof Error) throw out;
    return out;
  };
  const client = { location: 'sc://test', execute: (sql: string) => reply(sql, 'execute'), query: (sql: string) => reply(sql, 'query'), close: async () => {} };
  const Driver = SparkDriver as unknown as new (client: unknown, schema: string, options: object) => SparkDriver;
  return { sent, driver: new Driver(client, 'default', {}) };
}

describe('which statements wait and which end a script (unit)', () => {
  it('only statements that make a temporary view wait', () => {
    expect(deferrable('CACHE TABLE `_scd_keys` AS SELECT 1')).toBe(true);
    expect(deferrable("CREATE OR REPLACE TEMP VIEW `t` USING text OPTIONS (path '/x')")).toBe(true);
    expect(deferrable('ALTER VIEW `a` RENAME TO `b`')).toBe(true);
    for (const sql of ['INSERT INTO t SELECT 1', 'MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE', 'DROP VIEW x', 'CREATE TABLE t (a INT) USING delta', 'SELECT 1'])
      expect(deferrable(sql), sql).toBe(false);
  });
  it('a session setting, DESCRIBE, SHOW and EXPLAIN never go in a script (Spark 4.2 refuses the first two, answers nothing for the rest)', () => {
    for (const sql of ['SET spark.x = 1', 'RESET spark.x', 'DESCRIBE HISTORY t LIMIT 1', 'DESCRIBE QUERY SELECT 1', 'SHOW VIEWS', 'EXPLAIN SELECT 1', 'USE db'])
      expect(scriptable(sql), sql).toBe(false);
    for (const sql of ['SELECT count(*) FROM a', 'INSERT INTO t SELECT 1', 'MERGE INTO t USING s ON true WHEN MATCHED THEN DELETE', 'DROP VIEW IF EXISTS a'])
      expect(scriptable(sql), sql).toBe(true);
  });
  it('a script holds the statements in order, each ended once', () => {
    expect(sqlScript(['CACHE TABLE a AS SELECT 1;', ' SELECT 2 '])).toBe('BEGIN\nCACHE TABLE a AS SELECT 1;\nSELECT 2;\nEND');
  });
});

describe("the Spark driver's round trips (unit)", () => {
  it("staging's scratch is sent before stageFiles returns: it runs while the lease is taken, not after", async () => {
    const { sent, driver } = recording((sql) =>
      sql.includes('SELECT k, n FROM')
        ? [
            { k: null, n: 2 },
            { k: 'id', n: null },
          ]
        : [],
    );
    const staged = await driver.stageFiles([{ path: '/data/in.ndjson', format: 'ndjson' }], '_scd_stage', '_scd_rejects');
    expect(staged.records).toBe(2);
    // The lines and their keys in one round trip (answering the query); the staged rows and the
    // rejects made in the next, before stageFiles returns, not with the commit's next query.
    expect(sent).toHaveLength(2);
    expect(sent[1]!.sql).toMatch(/^BEGIN\nCACHE TABLE `_scd_stage` AS [\s\S]*;\nCACHE TABLE `_scd_rejects` AS [\s\S]*;\nEND$/);
    await driver.query('SELECT 1');
    expect(sent.at(-1)).toEqual({ as: 'query', sql: 'SELECT 1' });
  });

  it('views made in a row go with the next query, in one round trip that answers the query', async () => {
    const { sent, driver } = recording((sql) => (sql.startsWith('BEGIN') ? [{ n: 3 }] : []));
    await driver.run('CACHE TABLE `a` AS SELECT 1 AS x');
    await driver.run('CREATE TEMP VIEW `b` AS SELECT * FROM `a`');
    expect(sent).toEqual([]);
    expect(await driver.query('SELECT count(*) AS n FROM `b`')).toEqual([{ n: 3 }]);
    expect(sent).toEqual([{ as: 'execute', sql: 'BEGIN\nCACHE TABLE `a` AS SELECT 1 AS x;\nCREATE TEMP VIEW `b` AS SELECT * FROM `a`;\nSELECT count(*) AS n FROM `b`;\nEND' }]);
  });

  it('a write goes with the views before it, and is done when run returns', async () => {
    const { sent, driver } = recording();
    await driver.run('CACHE TABLE `a` AS SELECT 1 AS x');
    await driver.run('INSERT INTO t SELECT * FROM `a`');
    expect(sent.map((s) => s.sql)).toEqual(['BEGIN\nCACHE TABLE `a` AS SELECT 1 AS x;\nINSERT INTO t SELECT * FROM `a`;\nEND']);
  });

  it('DESCRIBE of a view that waits: the view first (its script), then DESCRIBE alone', async () => {
    const { sent, driver } = recording((sql) => (sql.startsWith('DESCRIBE') ? [{ col_name: 'x', data_type: 'int' }] : []));
    await driver.run('CACHE TABLE `a` AS SELECT 1 AS x');
    expect(await driver.columns('a')).toEqual([{ name: 'x', type: 'int' }]);
    expect(sent.map((s) => s.sql)).toEqual(['BEGIN\nCACHE TABLE `a` AS SELECT 1 AS x;\nEND', 'DESCRIBE TABLE `a`']);
  });

  it('a script the optimizer refused: its views not made yet are made one at a time, then the statement is sent alone', async () => {
    let scripts = 0;
    const { sent, driver } = recording((sql, as) => {
      if (sql.startsWith('BEGIN')) return ++scripts === 1 ? refused() : [];
      if (sql.startsWith('SHOW VIEWS')) return [{ viewName: '_scd_a', isTemporary: true }];
      return as === 'query' ? [{ n: 1 }] : [];
    });
    await driver.run('CACHE TABLE `_scd_a` AS SELECT 1 AS x');
    await driver.run('CACHE TABLE `_scd_b` AS SELECT * FROM `_scd_a`');
    expect(await driver.query('SELECT count(*) AS n FROM `_scd_b`')).toEqual([{ n: 1 }]);
    expect(sent.slice(1).map((s) => s.sql)).toEqual([
      "SHOW VIEWS IN `default` LIKE '_scd_*'",
      // _scd_a was made before the refused statement: not made twice.
      'CACHE TABLE `_scd_b` AS SELECT * FROM `_scd_a`',
      'SELECT count(*) AS n FROM `_scd_b`',
    ]);
  });

  it("a commit's views go in one script, newest first; a pinned view never sent is not dropped (its name is the table's)", async () => {
    const { sent, driver } = recording((sql) => (sql.startsWith('DESCRIBE HISTORY') ? [{ version: 4 }] : []));
    await driver.run('CACHE TABLE `_scd_a` AS SELECT 1 AS x');
    await driver.query('SELECT 1');
    await driver.pinReads(['dim']);
    await driver.run('CACHE TABLE `_scd_b` AS SELECT * FROM `_scd_a`');
    sent.length = 0;
    await driver.discardScratch(['_scd_a', '_scd_b', '_scd_c'], []);
    expect(sent.map((s) => s.sql)).toEqual(['BEGIN\nDROP VIEW IF EXISTS `_scd_b`;\nDROP VIEW IF EXISTS `_scd_a`;\nDROP VIEW IF EXISTS `_scd_c`;\nEND']);
  });

  it('a pinned view that was sent is dropped after the views that read it', async () => {
    const { sent, driver } = recording((sql) => (sql.startsWith('DESCRIBE HISTORY') ? [{ version: 4 }] : []));
    await driver.pinReads(['dim']);
    await driver.run('CACHE TABLE `_scd_a` AS SELECT * FROM dim');
    await driver.query('SELECT 1');
    sent.length = 0;
    await driver.discardScratch([], []);
    expect(sent.map((s) => s.sql)).toEqual(['BEGIN\nDROP VIEW IF EXISTS `_scd_a`;\nDROP VIEW IF EXISTS `dim`;\nEND']);
  });
});
