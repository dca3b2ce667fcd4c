/**
 * Reading a row's values exactly (docs/QUERYING.md "Values as read"): a JSON number becomes a
 * JavaScript number only when that number names the same value; a double's ±Infinity and NaN,
 * written bare by DuckDB, become JSON strings before anything parses them.
 */
import { describe, expect, it } from 'vitest';
import { exactNumber, mayHoldInexactNumber } from '../../src/files/json-number.js';
import { quoteNonFinite } from '../../src/files/json-text.js';
import { valueText } from '../../src/query/output.js';

describe('exact values', () => {
  it.each([
    ['0.1', 0.1],
    ['2.0', 2],
    ['-0.0', -0],
    ['-0', -0],
    ['1e308', 1e308],
    ['-1e+308', -1e308],
    ['5e-324', 5e-324],
    ['9007199254740992', 9007199254740992],
    ['9007199254740993', '9007199254740993'],
    ['9007199254740993.0', '9007199254740993.0'],
    ['-9223372036854775808', '-9223372036854775808'],
    ['0.30000000000000004', 0.30000000000000004],
    ['0.3000000000000000444', '0.3000000000000000444'],
    ['1e999', '1e999'],
    ['1e-999', '1e-999'],
  ])('%s is %s', (text, value) => {
    const got = exactNumber(text);
    expect(Object.is(got, value) || got === value).toBe(true);
  });

  it('a number of 15 significant digits or fewer takes the fast path; longer ones and 3-digit exponents do not', () => {
    expect(mayHoldInexactNumber('{"a":123456789012345,"t":"2025-01-01T00:00:00.123456Z"}')).toBe(false);
    expect(mayHoldInexactNumber('{"a":9007199254740993}')).toBe(true);
    expect(mayHoldInexactNumber('{"a":12345678.12345678}')).toBe(true);
    expect(mayHoldInexactNumber('{"a":1e-400}')).toBe(true);
  });

  it('bare Infinity, -Infinity and NaN become strings; the same words inside strings stay as they are', () => {
    expect(quoteNonFinite('{"a":Infinity,"b":-Infinity,"c":NaN,"d":"Infinity: NaN","e":[NaN]}')).toBe('{"a":"Infinity","b":"-Infinity","c":"NaN","d":"Infinity: NaN","e":["NaN"]}');
    expect(quoteNonFinite('{"a":"say \\"NaN\\"","b":1}')).toBe('{"a":"say \\"NaN\\"","b":1}');
  });

  it('a value as text: -0 keeps its sign, exact text is as it is', () => {
    expect([-0, 0, 1e308, Infinity, -Infinity, NaN, '9007199254740993.0', null, { a: 1 }].map(valueText)).toEqual([
      '-0',
      '0',
      '1e+308',
      'Infinity',
      '-Infinity',
      'NaN',
      '9007199254740993.0',
      '',
      '{"a":1}',
    ]);
  });
});
