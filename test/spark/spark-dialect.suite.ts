import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SparkConnectClient } from '../../src/dialects/spark/spark-connect-client.js';
import { sparkDialect as d, normSparkType, sparkString } from '../../src/dialects/spark/spark-dialect.js';

describe('Spark dialect types and literals (unit: always run)', () => {
  it('spells types one way and knows which widen losslessly', () => {
    expect(normSparkType('integer')).toBe('INT');
    expect(normSparkType('long')).toBe('BIGINT');
    expect(normSparkType('decimal')).toBe('DECIMAL(10,0)');
    expect(normSparkType('numeric(12, 2)')).toBe('DECIMAL(12,2)');
    expect(normSparkType('timestamp_ltz')).toBe('TIMESTAMP');
    expect(
      d.sameType(
        'struct<seq:bigint,at:timestamp>',
        d.structType([
          ['seq', 'BIGINT'],
          ['at', 'TIMESTAMP'],
        ]),
      ),
    ).toBe(true);
    expect(d.sameType('varchar', 'STRING')).toBe(true);
    expect(d.widens('INT', 'BIGINT')).toBe(true);
    expect(d.widens('BIGINT', 'INT')).toBe(false);
    expect(d.widens('INT', 'DOUBLE')).toBe(true);
    expect(d.widens('INT', 'DECIMAL(10,0)')).toBe(true);
    expect(d.widens('BIGINT', 'DECIMAL(18,0)')).toBe(false);
    expect(d.widens('DECIMAL(10,2)', 'DECIMAL(12,2)')).toBe(true);
    expect(d.widens('DECIMAL(10,2)', 'DECIMAL(12,1)')).toBe(false);
    expect(d.widens('DATE', 'TIMESTAMP')).toBe(true);
    expect(d.commonType('SMALLINT', 'bigint')).toBe('BIGINT');
    expect(d.commonType('STRING', 'INT')).toBeUndefined();
  });

  it('quotes identifiers in backticks and escapes the backslashes Spark reads in a literal', () => {
    expect(d.quote('a`b')).toBe('`a``b`');
    expect(sparkString("it's a\\d")).toBe("'it\\'s a\\\\d'");
    expect(() => d.rowId).toThrow(/spark dialect has no row id/);
    expect(d.capabilities.ignoreNullsInWindows).toBe(false);
  });
});

const url = process.env.SCD_TEST_SPARK_URL;
const db = `scd_dialect_${process.pid}_${Date.now().toString(36)}`;

describe.skipIf(!url)('Spark dialect hooks on a live server (SCD_TEST_SPARK_URL; skipped when unset)', { timeout: 300_000 }, () => {
  let c: SparkConnectClient;
  const one = async (sql: string) => (await c.query(sql))[0]!;
  beforeAll(async () => {
    c = SparkConnectClient.connect(url!);
    await c.execute(`SET spark.sql.session.timeZone = UTC`);
  });
  afterAll(async () => {
    await c?.execute(`DROP DATABASE IF EXISTS ${db} CASCADE`);
    await c?.close();
  });

  it('quotes any identifier and literal', async () => {
    const name = 'we`ird name ü';
    expect(await one(`SELECT 1 AS ${d.quote(name)}, ${sparkString('it\'s \\d \\\\ "q"')} AS s`)).toEqual({ [name]: 1, s: 'it\'s \\d \\\\ "q"' });
  });

  it('makes a Delta table of every internal type, a decimal and a struct, and reads its types back as the same', async () => {
    await c.execute(`CREATE DATABASE IF NOT EXISTS ${db}`);
    const st = d.structType([
      ['seq', d.types.bigint],
      ['at', d.types.timestamptz],
    ]);
    const cols: Array<[string, string]> = [...Object.entries(d.types), ['dec', d.decimal(18, 4)], ['st', st]];
    await c.execute(`CREATE TABLE ${db}.types (${cols.map(([n, t]) => `${d.quote(n)} ${t}`).join(', ')}) USING delta`);
    const described = await c.execute(`DESCRIBE TABLE ${db}.types`);
    for (const [n, t] of cols) {
      const got = described.find((r) => r.col_name === n)!.data_type as string;
      expect(d.sameType(got, t), `${n}: ${got} vs ${t}`).toBe(true);
    }
  });

  it('matches a regular expression against the whole text, backslashes intact', async () => {
    expect(
      await one(`SELECT ${d.matches("'123'", '\\d+')} AS a, ${d.matches("'a123'", '\\d+')} AS b, ${d.matches("'12a'", '\\d+')} AS c, ${d.matches("'x|y'", 'x\\|y')} AS e`),
    ).toEqual({
      a: true,
      b: false,
      c: false,
      e: true,
    });
  });

  it('tells the kind and text of JSON values', async () => {
    // Strings with and without escapes (those without are cut between the quotes, unparsed).
    const docs = ['"a\\"b"', '{"x":1}', '12.5', 'null', '[1,2]', 'true', 'false', '"plain"', '""', '"é \\u00e9 \\\\"', '"null"', '"12"'];
    const rows = await c.query(
      docs.map((j, i) => `SELECT ${i} AS i, ${d.jsonKind(sparkString(j))} AS kind, ${d.jsonText(sparkString(j))} AS text`).join(' UNION ALL ') + ' ORDER BY i',
    );
    expect(rows.map((r) => [r.kind, r.text])).toEqual([
      ['string', 'a"b'],
      ['object', '{"x":1}'],
      ['number', '12.5'],
      ['null', null],
      ['array', '[1,2]'],
      ['boolean', 'true'],
      ['boolean', 'false'],
      ['string', 'plain'],
      ['string', ''],
      ['string', 'é é \\'],
      ['string', 'null'],
      ['string', '12'],
    ]);
  });

  it('reads a wall-clock time in a zone as an instant, and writes values as JSON', async () => {
    expect(await one(`SELECT ${d.wallClockToInstant("TIMESTAMP_NTZ'2024-01-01 10:00:00'", 'Asia/Kolkata')} AS t`)).toEqual({ t: '2024-01-01T04:30:00Z' });
    expect(
      await one(
        `SELECT ${d.toJson('1')} AS a, ${d.toJson("'x\"y'")} AS b, ${d.toJson('CAST(NULL AS INT)')} AS c, ${d.toJson("named_struct('k', 1)")} AS e, ${d.toJson('array(1, 2)')} AS f`,
      ),
    ).toEqual({
      a: '1',
      b: '"x\\"y"',
      c: 'null',
      e: '{"k":1}',
      f: '[1,2]',
    });
    const fields: Array<[string, string, string]> = [
      ['n', '1', 'INT'],
      ['s', "'x'", 'STRING'],
      ['z', 'CAST(NULL AS STRING)', 'STRING'],
      ['d', "DATE'2024-02-29'", 'DATE'],
      ['t', "TIMESTAMP'2024-01-02 03:04:05.123456Z'", 'TIMESTAMP'],
      ['w', "TIMESTAMP'2024-01-02 03:04:05Z'", 'TIMESTAMP'],
      ['l', "TIMESTAMP_NTZ'2024-01-02 03:04:05.5'", 'TIMESTAMP_NTZ'],
      ['st', `CAST(named_struct('seq', 1, 'at', TIMESTAMP'2024-01-01 00:00:00Z') AS STRUCT<seq: BIGINT, at: TIMESTAMP>)`, 'STRUCT<seq: BIGINT, at: TIMESTAMP>'],
    ];
    const { j } = await one(`SELECT ${d.jsonObject(fields)} AS j`);
    expect(JSON.parse(j as string)).toEqual({
      n: 1,
      s: 'x',
      z: null,
      d: '2024-02-29',
      t: '2024-01-02T03:04:05.123456Z',
      w: '2024-01-02T03:04:05Z',
      l: '2024-01-02T03:04:05.500000',
      st: { seq: 1, at: '2024-01-01T00:00:00Z' },
    });
  });

  it('hashes a canonical text with SHA-256 (any engine can compute the same), NULL apart from empty text', async () => {
    const row = await one(`SELECT ${d.canonicalText(['1', 'CAST(NULL AS STRING)', "'x'"])} AS text, ${d.rowHash(['1', 'CAST(NULL AS STRING)', "'x'"])} AS h,
      ${d.rowHash(['CAST(NULL AS STRING)'])} AS hnull, ${d.rowHash(["''"])} AS hempty, CAST(0 AS ${d.types.hash}) AS zero`);
    expect(row.text).toBe('11\u001f0\u001f1x');
    expect(row.h).toBe(createHash('sha256').update('11\u001f0\u001f1x').digest('hex'));
    expect(row.hnull).not.toBe(row.hempty);
    // Canonical texts order bytewise, a NULL first in its position.
    const ordered = await c.query(`SELECT v FROM VALUES ('b'), (CAST(NULL AS STRING)), ('a'), ('') AS t(v) ORDER BY ${d.canonicalText(['v'])}`);
    expect(ordered.map((r) => r.v)).toEqual([null, '', 'a', 'b']);
  });

  it('takes the value at the greatest and smallest order, NULL values included', async () => {
    expect(
      await one(
        `SELECT ${d.lastBy('x', 'y')} AS last, ${d.firstBy('x', 'y')} AS first, ${d.lastBy('x', '-y')} AS last_neg FROM VALUES (1, 1), (CAST(NULL AS INT), 2), (CAST(NULL AS INT), 0) AS t(x, y)`,
      ),
    ).toEqual({
      last: null,
      first: null,
      last_neg: null,
    });
    expect(await one(`SELECT ${d.lastBy('x', 'y')} AS last, ${d.firstBy('x', 'y')} AS first FROM VALUES (1, 1), (2, 2), (3, 0) AS t(x, y)`)).toEqual({ last: 2, first: 3 });
  });

  it('builds typed structs, casts without failing, and writes any value as text', async () => {
    const s = d.struct([
      ['seq', '1', d.types.bigint],
      ['at', "TIMESTAMP'2024-01-01 00:00:00Z'", d.types.timestamptz],
    ]);
    const st = d.structType([
      ['seq', d.types.bigint],
      ['at', d.types.timestamptz],
    ]);
    expect(await one(`SELECT CAST(${s} AS ${st}) AS s, ${s} = CAST(${s} AS ${st}) AS same`)).toEqual({ s: { seq: '1', at: '2024-01-01T00:00:00Z' }, same: true });
    expect(d.prepareTypes([st])).toEqual([]);
    expect(
      await one(
        `SELECT ${d.tryCast("'abc'", 'INT')} AS bad, ${d.tryCast("'12'", 'INT')} AS good, ${d.tryCast("'2024-13-01'", 'DATE')} AS bad_date, ${d.toText("DATE'2024-01-02'")} AS text`,
      ),
    ).toEqual({
      bad: null,
      good: 12,
      bad_date: null,
      text: '2024-01-02',
    });
  });

  it('orders NULLs first ascending and last descending unless told (plan SQL must say NULLS FIRST/LAST)', async () => {
    const asc = await c.query(`SELECT x FROM VALUES (1), (CAST(NULL AS INT)) AS t(x) ORDER BY x`);
    const desc = await c.query(`SELECT x FROM VALUES (1), (CAST(NULL AS INT)) AS t(x) ORDER BY x DESC`);
    const said = await c.query(`SELECT x FROM VALUES (1), (CAST(NULL AS INT)) AS t(x) ORDER BY x ASC NULLS LAST`);
    expect([asc, desc, said].map((r) => r.map((x) => x.x))).toEqual([
      [null, 1],
      [1, null],
      [1, null],
    ]);
  });
});
