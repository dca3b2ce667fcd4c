/**
 * The class of each value (typing/lexical.ts valueClass), pinned for values at every edge of the
 * shapes it tells apart: signs, points and exponents, the 64-bit and 38-digit bounds, dates and
 * times that do not exist, every offset form, text that starts like a number or a time. The
 * expected classes are those the first implementation gave; a faster formulation must give them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Driver, openDriver } from '../../src/index.js';
import { castStaged } from '../../src/typing/cast.js';
import { jsonTextForClass, type ValueClass, valueClass } from '../../src/typing/lexical.js';
import { engines } from '../engines.js';

/** Text as written (a CSV value), and its class. */
// biome-ignore format: a table of values, packed several to a line
const TEXT: Array<[string, string]> = [
  ["", "s"], [" ", "s"], ["0", "i"], ["00", "i"], ["-0", "i"], ["+0", "i"], [".5", "f"], ["5.", "f"],
  ["-.5", "f"], ["+.5e3", "f"], ["1e5", "f"], ["1E5", "f"], ["1e+5", "f"], ["1.5e-3", "f"],
  ["12", "i"], ["-12", "i"], ["+12", "i"], ["123456789012345678", "i"], ["1234567890123456789", "i"],
  ["9223372036854775807", "i"], ["9223372036854775808", "I"], ["-9223372036854775808", "i"],
  ["-9223372036854775809", "I"], ["123456789012345678901234567890123456789", "I"],
  ["1234567890123456789012345678901234567890", "H"], ["1-2", "s"], ["1.2.3", "s"], ["e5", "s"],
  [".", "s"], ["-", "s"], ["+", "s"], ["true", "b"], ["TRUE", "b"], ["True", "b"], ["false", "b"],
  ["FALSE", "b"], ["tru", "s"], ["truex", "s"], ["f", "s"], ["t", "s"], ["yes", "s"], ["null", "s"],
  ["NaN", "s"], ["Infinity", "s"], ["-Infinity", "s"], ["inf", "s"], ["2024-01-01", "d"],
  ["2024-13-01", "s"], ["2024-1-01", "s"], ["2024-01-01T10:00", "w"], ["2024-01-01 10:00:00", "w"],
  ["2024-01-01t10:00:00.123456", "s"], ["2024-01-01T10:00:00Z", "z"], ["2024-01-01T10:00:00z", "s"],
  ["2024-01-01T10:00:00+02", "z"], ["2024-01-01T10:00:00+0200", "z"], ["2024-01-01T10:00:00 +02:00", "s"],
  ["2024-01-01T25:00:00", "s"], ["2024-02-30", "s"], ["2024-01-01T10:00:00+25:00", "z"],
  ["2024-01-01x", "s"], ["2024-01-01 ", "s"], [" 2024-01-01", "s"], ["abcd-ef-gh", "s"],
  ["-123-45-67", "s"], ["1234-56-78", "s"], ["+123-45-6789", "s"], ["1.0e-56789", "f"],
  ["99999-01-01", "s"], ["2024-01-01T10", "s"], ["٣", "s"], ["é", "s"], ["１２", "s"], ["\t12", "s"],
  ["12 ", "s"], ["0x10", "s"], ["1_000", "s"], ["1,5", "s"], ["customer 1", "s"], ["{\"a\":1}", "s"],
  ["[1]", "s"], ["2016-12-31T23:59:60Z", "s"], ["2016-12-31 23:59:60", "s"], ["2016-12-31T23:59:59.9999999Z", "z"],
];

/** A JSON value as written, and its class (null for a JSON null). */
// biome-ignore format: a table of values, packed several to a line
const JSON_VALUES: Array<[string, string | null]> = [
  ["\"\"", "s"], ["\" \"", "s"], ["\"0\"", "si"], ["\"00\"", "si"], ["\"-0\"", "si"], ["\"+0\"", "si"],
  ["\".5\"", "sf"], ["\"5.\"", "sf"], ["\"-.5\"", "sf"], ["\"+.5e3\"", "sf"], ["\"1e5\"", "sf"],
  ["\"1E5\"", "sf"], ["\"1e+5\"", "sf"], ["\"1.5e-3\"", "sf"], ["\"12\"", "si"], ["\"-12\"", "si"],
  ["\"+12\"", "si"], ["\"123456789012345678\"", "si"], ["\"1234567890123456789\"", "si"],
  ["\"9223372036854775807\"", "si"], ["\"9223372036854775808\"", "sI"],
  ["\"-9223372036854775808\"", "si"], ["\"-9223372036854775809\"", "sI"],
  ["\"123456789012345678901234567890123456789\"", "sI"],
  ["\"1234567890123456789012345678901234567890\"", "sH"], ["\"1-2\"", "s"], ["\"1.2.3\"", "s"],
  ["\"e5\"", "s"], ["\".\"", "s"], ["\"-\"", "s"], ["\"+\"", "s"], ["\"true\"", "sb"],
  ["\"TRUE\"", "sb"], ["\"True\"", "sb"], ["\"false\"", "sb"], ["\"FALSE\"", "sb"], ["\"tru\"", "s"],
  ["\"truex\"", "s"], ["\"f\"", "s"], ["\"t\"", "s"], ["\"yes\"", "s"], ["\"null\"", "s"],
  ["\"NaN\"", "s"], ["\"Infinity\"", "s"], ["\"-Infinity\"", "s"], ["\"inf\"", "s"],
  ["\"2024-01-01\"", "d"], ["\"2024-13-01\"", "s"], ["\"2024-1-01\"", "s"],
  ["\"2024-01-01T10:00\"", "w"], ["\"2024-01-01 10:00:00\"", "w"],
  ["\"2024-01-01t10:00:00.123456\"", "s"], ["\"2024-01-01T10:00:00Z\"", "z"],
  ["\"2024-01-01T10:00:00z\"", "s"], ["\"2024-01-01T10:00:00+02\"", "z"],
  ["\"2024-01-01T10:00:00+0200\"", "z"], ["\"2024-01-01T10:00:00 +02:00\"", "s"],
  ["\"2024-01-01T25:00:00\"", "s"], ["\"2024-02-30\"", "s"], ["\"2024-01-01T10:00:00+25:00\"", "z"],
  ["\"2024-01-01x\"", "s"], ["\"2024-01-01 \"", "s"], ["\" 2024-01-01\"", "s"], ["\"abcd-ef-gh\"", "s"],
  ["\"-123-45-67\"", "s"], ["\"1234-56-78\"", "s"], ["\"+123-45-6789\"", "s"], ["\"1.0e-56789\"", "sf"],
  ["\"99999-01-01\"", "s"], ["\"2024-01-01T10\"", "s"], ["\"٣\"", "s"], ["\"é\"", "s"], ["\"１２\"", "s"],
  ["\"\\t12\"", "s"], ["\"12 \"", "s"], ["\"0x10\"", "s"], ["\"1_000\"", "s"], ["\"1,5\"", "s"],
  ["\"customer 1\"", "s"], ["\"{\\\"a\\\":1}\"", "s"], ["\"[1]\"", "s"], ["1", "i"], ["1.5", "f"],
  ["1e5", "f"], ["1E400", "X"], ["-0.0", "f"], ["123456789012345678901234567890", "I"], ["1.0", "f"],
  ["true", "b"], ["false", "b"], ["null", null], ["{\"a\":1}", "n"], ["[1,2]", "n"], ["[]", "n"],
  ["{}", "n"], ["12345678901234567890", "I"],
  // Beyond every double: no number type holds them (quarantined from a number column).
  ["-1e999", "X"], ["1.7976931348623157e308", "f"], ["1.8e308", "X"], ["1e-999", "f"], [`1${"0".repeat(400)}`, "X"],
  [`1${"0".repeat(300)}`, "H"], ["\"1e999\"", "sX"], ["\"-1E+999\"", "sX"], ["\"1e308\"", "sf"],
];

describe('DuckDB: the class of a value', () => {
  let driver: Driver;
  beforeAll(async () => {
    driver = await openDriver(':memory:');
  });
  afterAll(async () => {
    await driver.close();
  });
  const d = () => driver.dialect;
  const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;

  it('text as written', async () => {
    const rows = await driver.query(
      `SELECT i, ${valueClass(d(), 'x', undefined)} AS k FROM (VALUES ${TEXT.map(([v], i) => `(${i}, ${literal(v)})`).join(', ')}) t(i, x) ORDER BY i`,
    );
    expect(rows.map((r, i) => [TEXT[i]![0], r.k])).toEqual(TEXT);
  });

  it('JSON values', async () => {
    const rows = await driver.query(
      `SELECT i, ${valueClass(d(), 'x', 'kind')} AS k FROM (SELECT i, ${d().jsonText('j')} AS x, ${d().jsonKind('j')} AS kind
       FROM (SELECT i, CAST(j AS JSON) AS j FROM (VALUES ${JSON_VALUES.map(([v], i) => `(${i}, ${literal(v)})`).join(', ')}) t(i, j))) ORDER BY i`,
    );
    expect(rows.map((r, i) => [JSON_VALUES[i]![0], r.k])).toEqual(JSON_VALUES);
  });
});

/**
 * The classes pass reads a stand-in for a JSON value's text (jsonTextForClass: its JSON text, or
 * nothing for a string whose first character decides): every value must get the class its text
 * gives, on every engine. Beyond the values above: strings that start with an escape, and JSON
 * numbers as a cast writes them (not as the engine would: -0, 1.50, 1E5).
 */
// biome-ignore format: a table of values, packed several to a line
const MORE_JSON: string[] = [
  '"\\u0031"', '"\\u0031-2"', '"\\u0074rue"', '"\\u0032024-01-01"', '"\\\\1"', '"\\"1"', '"\\/1"', '"é1"', '",1"', '"/1"',
  '"Tx"', '"Fx"', '"TRUE "', '"😀"', '-0', '1.50', '1E5', '-12', '0', '123456789012345678901234567890123456789012',
];

describe.each(engines)('$name: the class of a JSON value from its stand-in text', (engine) => {
  let driver: Driver;
  beforeAll(async () => {
    driver = await engine.open();
  });
  afterAll(async () => {
    await driver.close();
  });

  it('is the class of its text', async () => {
    const d = driver.dialect;
    const values = [...JSON_VALUES.map(([v]) => v), ...MORE_JSON];
    const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;
    const json = `CAST(j AS ${d.types.json})`;
    const rows = await driver.query(
      `SELECT i, ${valueClass(d, 'x', 'kind')} AS k, ${valueClass(d, 'y', 'kind')} AS l, y FROM (
         SELECT i, ${d.jsonText('j')} AS x, ${jsonTextForClass(d, 'j')} AS y, ${d.jsonKind('j')} AS kind
         FROM (SELECT i, ${json} AS j FROM (VALUES ${values.map((v, i) => `(${i}, ${literal(v)})`).join(', ')}) t(i, j)) v) c ORDER BY i`,
    );
    expect(rows.length).toBe(values.length);
    expect(rows.map((r, i) => [values[i], r.l])).toEqual(rows.map((r, i) => [values[i], r.k]));
    // The stand-in of a string whose first character decides is its JSON text (the point of it).
    expect(rows.filter((r) => r.y === values[Number(r.i)]).map((r) => values[Number(r.i)])).toContain('"customer 1"');
  });
});

/**
 * The cast leaves out a check of a value's shape when every value of the column has a class that
 * passes it (typing/cast.ts, StagedColumn.classes): for a value of each class, the cast that knows
 * the column's classes gives what the checked cast gives, into every type whose check it skips.
 */
describe.each(engines)('$name: a cast that knows its classes', (engine) => {
  let driver: Driver;
  beforeAll(async () => {
    driver = await engine.open();
  });
  afterAll(async () => {
    await driver.close();
  });
  const literal = (v: string) => `'${v.replace(/'/g, "''")}'`;

  it.each([
    ['JSON', 'json' as const, JSON_VALUES],
    ['text', 'text' as const, TEXT],
  ])('of %s values', async (_name, lexical, values) => {
    const d = driver.dialect;
    const types = [d.types.bigint, d.types.double, d.types.date, d.types.timestamp, d.types.timestamptz];
    const byClass = new Map<string, string[]>();
    for (const [v, k] of values) if (k !== null) byClass.set(k, [...(byClass.get(k) ?? []), v]);
    let skipped = 0;
    for (const [k, vs] of byClass) {
      for (const type of types) {
        const checked = castStaged(d, 'x', { type: d.types.text, lexical }, type, 'UTC').expr;
        const knowing = castStaged(d, 'x', { type: d.types.text, lexical, classes: new Set([k as ValueClass]) }, type, 'UTC').expr;
        if (knowing !== checked) skipped++;
        const rows = await driver.query(
          `SELECT i, ${d.toText(checked)} AS a, ${d.toText(knowing)} AS b FROM (SELECT i, ${lexical === 'json' ? `CAST(x AS ${d.types.json})` : 'x'} AS x
             FROM (VALUES ${vs.map((v, i) => `(${i}, ${literal(v)})`).join(', ')}) t(i, x)) v ORDER BY i`,
        );
        expect(
          rows.map((r) => [vs[Number(r.i)], type, r.b]),
          `class ${k}`,
        ).toEqual(rows.map((r) => [vs[Number(r.i)], type, r.a]));
      }
    }
    // Some checks are left out (the point of it): integers, numbers, dates and times.
    expect(skipped).toBeGreaterThanOrEqual(8);
  });
});
