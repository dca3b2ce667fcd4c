import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SparkConnectClient } from '../../src/dialects/spark/spark-connect-client.js';
import { QueryError } from '../../src/errors.js';

const url = process.env.SCD_TEST_SPARK_URL;
const db = `scd_test_${process.pid}_${Date.now().toString(36)}`;

// A live Spark Connect server with Delta (`npm run spark`); the whole file is skipped without one.
describe.skipIf(!url)('Spark Connect client on a live server (SCD_TEST_SPARK_URL; skipped when unset)', { timeout: 300_000 }, () => {
  let client: SparkConnectClient;
  beforeAll(async () => {
    client = SparkConnectClient.connect(url!);
    await client.execute(`CREATE DATABASE IF NOT EXISTS ${db}`);
  }, 300_000);
  afterAll(async () => {
    await client?.execute(`DROP DATABASE IF EXISTS ${db} CASCADE`);
    await client?.close();
  }, 300_000);

  it('reads every type as the DuckDB driver gives it: exact big integers and decimals, ISO dates and timestamps, nulls, structs, arrays', async () => {
    const [row] = await client.query(`SELECT
      CAST(1 AS TINYINT) AS ti, CAST(-2 AS SMALLINT) AS si, 3 AS i,
      9007199254740993 AS big, CAST(-9223372036854775808 AS BIGINT) AS min_big,
      CAST(12345.6789 AS DECIMAL(38,4)) AS dec, CAST(-0.5 AS DECIMAL(5,2)) AS neg_dec,
      CAST('12345678901234567890123456789.123456789' AS DECIMAL(38,9)) AS wide_dec, CAST(7 AS DECIMAL(10,0)) AS int_dec,
      0.1D + 0.2D AS dbl, CAST('NaN' AS DOUBLE) AS nan, CAST('-Infinity' AS DOUBLE) AS ninf,
      'héllo 🌍 日本 "q" \\\\ ''' AS s, '' AS empty,
      DATE'2024-02-29' AS d, DATE'1900-01-01' AS old_d,
      TIMESTAMP'2024-01-02 03:04:05.123456Z' AS ts, TIMESTAMP'1969-12-31 23:59:59.5Z' AS pre_epoch, TIMESTAMP'2024-01-02 03:04:05Z' AS whole_ts,
      TIMESTAMP_NTZ'2024-01-02 03:04:05.25' AS ntz,
      true AS yes, false AS no, NULL AS n, CAST(NULL AS INT) AS null_int, CAST(NULL AS STRING) AS null_text,
      named_struct('a', 1, 'b', 'x', 'c', CAST(NULL AS STRING), 'd', named_struct('e', DATE'2024-01-01')) AS st,
      array(1, NULL, 3) AS arr, array(named_struct('k', 9007199254740993)) AS arr_st, CAST(NULL AS ARRAY<INT>) AS null_arr,
      X'0141FF5C22' AS bin, map('k', 1) AS m`);
    expect(row).toEqual({
      ti: 1,
      si: -2,
      i: 3,
      big: '9007199254740993',
      min_big: '-9223372036854775808',
      dec: '12345.6789',
      neg_dec: '-0.50',
      wide_dec: '12345678901234567890123456789.123456789',
      int_dec: '7',
      dbl: 0.30000000000000004,
      nan: 'NaN',
      ninf: '-Infinity',
      s: 'héllo 🌍 日本 "q" \\ \'',
      empty: '',
      d: '2024-02-29',
      old_d: '1900-01-01',
      ts: '2024-01-02T03:04:05.123456Z',
      pre_epoch: '1969-12-31T23:59:59.5Z',
      whole_ts: '2024-01-02T03:04:05Z',
      ntz: '2024-01-02T03:04:05.25',
      yes: true,
      no: false,
      n: null,
      null_int: null,
      null_text: null,
      st: { a: 1, b: 'x', c: null, d: { e: '2024-01-01' } },
      arr: [1, null, 3],
      arr_st: [{ k: '9007199254740993' }],
      null_arr: null,
      bin: '\\x01A\\xFF\\\\\\x22',
      m: [{ key: 'k', value: 1 }],
    });
  });

  it('runs DDL and DML on a Delta table with its change feed: INSERT, MERGE, DESCRIBE HISTORY, VERSION AS OF, table_changes', async () => {
    const t = `${db}.customers`;
    await client.execute(`CREATE TABLE ${t} (id BIGINT, name STRING, amount DECIMAL(10,2), seen TIMESTAMP) USING delta TBLPROPERTIES (delta.enableChangeDataFeed = true)`);
    await client.execute(`INSERT INTO ${t} VALUES (1, 'Ada', 10.50, TIMESTAMP'2024-01-01 00:00:00Z'), (2, 'Bo', 20.00, TIMESTAMP'2024-01-02 00:00:00Z')`);
    const merged = await client.execute(`MERGE INTO ${t} AS t USING (SELECT 2L AS id, 'Bob' AS name, CAST(21 AS DECIMAL(10,2)) AS amount, TIMESTAMP'2024-02-01 00:00:00Z' AS seen
        UNION ALL SELECT 3L, 'Cy', CAST(5 AS DECIMAL(10,2)), TIMESTAMP'2024-02-02 00:00:00Z') AS s ON t.id = s.id
      WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *`);
    // MERGE answers with its counts (a command's rows come back as a local relation).
    expect(merged).toEqual([{ num_affected_rows: '2', num_updated_rows: '1', num_deleted_rows: '0', num_inserted_rows: '1' }]);

    expect(await client.query(`SELECT id, name, amount, seen FROM ${t} ORDER BY id`)).toEqual([
      { id: '1', name: 'Ada', amount: '10.50', seen: '2024-01-01T00:00:00Z' },
      { id: '2', name: 'Bob', amount: '21.00', seen: '2024-02-01T00:00:00Z' },
      { id: '3', name: 'Cy', amount: '5.00', seen: '2024-02-02T00:00:00Z' },
    ]);
    const history = await client.execute(`DESCRIBE HISTORY ${t}`);
    expect(history.map((h) => [h.version, h.operation])).toEqual([
      ['2', 'MERGE'],
      ['1', 'WRITE'],
      ['0', 'CREATE TABLE'],
    ]);
    expect(await client.query(`SELECT id, name FROM ${t} VERSION AS OF 1 ORDER BY id`)).toEqual([
      { id: '1', name: 'Ada' },
      { id: '2', name: 'Bo' },
    ]);
    const changes = await client.query(`SELECT id, name, _change_type, _commit_version FROM table_changes('${t}', 2) ORDER BY id, _change_type`);
    expect(changes).toEqual([
      { id: '2', name: 'Bob', _change_type: 'update_postimage', _commit_version: '2' },
      { id: '2', name: 'Bo', _change_type: 'update_preimage', _commit_version: '2' },
      { id: '3', name: 'Cy', _change_type: 'insert', _commit_version: '2' },
    ]);
  });

  it("turns Spark's error into one line (the plan and the SQL echo left out)", async () => {
    const missing = client.query(`SELECT * FROM ${db}.no_such_table`);
    await expect(missing).rejects.toBeInstanceOf(QueryError);
    const e = (await missing.catch((x: unknown) => x)) as QueryError;
    expect(e.message).toMatch(/^query failed: \[TABLE_OR_VIEW_NOT_FOUND\]/);
    expect(e.message).not.toContain('\n');
    expect(e.sql).toBe(`SELECT * FROM ${db}.no_such_table`);
    const syntax = (await client.execute('SELEC 1').catch((x: unknown) => x)) as QueryError;
    expect(syntax.message).toMatch(/^query failed: \[PARSE_SYNTAX_ERROR\][^\n]*$/);
    // The session goes on after a failed statement.
    expect(await client.query('SELECT 2 AS two')).toEqual([{ two: 2 }]);
  });

  it('streams a large result batch by batch (1M rows)', async () => {
    let rows = 0;
    let batches = 0;
    let sum = 0;
    let lastText = '';
    for await (const batch of client.stream('SELECT id, CAST(id AS STRING) AS text FROM range(1000000)')) {
      batches++;
      rows += batch.length;
      for (const r of batch) sum += Number(r.id);
      lastText = String(batch[batch.length - 1]!.text);
    }
    expect(rows).toBe(1_000_000);
    expect(sum).toBe((999_999 * 1_000_000) / 2);
    expect(lastText).toBe('999999');
    expect(batches).toBeGreaterThan(1);
  });

  it('stops a running statement when its signal aborts, and the session goes on', async () => {
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 1000);
    // Uninterrupted, the statement would sleep its minute and answer: interrupted, it is refused.
    const slow = client.query(`SELECT reflect('java.lang.Thread', 'sleep', 60000L) AS slept`, { signal: abort.signal });
    await expect(slow).rejects.toThrow(/interrupted/);
    expect(await client.query('SELECT 3 AS three')).toEqual([{ three: 3 }]);
  });

  it('uses a fresh session per client and releases it at close (the server refuses it afterwards)', async () => {
    const other = SparkConnectClient.connect(url!);
    expect(other.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(other.sessionId).not.toBe(client.sessionId);
    await other.execute('SET spark.sql.shuffle.partitions = 3');
    expect(await other.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await other.close();
    await expect(other.query('SELECT 1')).rejects.toThrow(/closed/);
    const rejoin = SparkConnectClient.connect(`${url};session_id=${other.sessionId}`);
    await expect(rejoin.query('SELECT 1')).rejects.toThrow(/SESSION_CLOSED|closed/i);
    await rejoin.close();
  });
});
