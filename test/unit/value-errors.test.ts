/**
 * isValueError: an engine's refusal of a VALUE while a statement ran (what a person's --where can
 * cause), told apart from a refusal of the statement itself, in each engine's own words.
 */
import { describe, expect, it } from 'vitest';
import { isValueError } from '../../src/dialects/value-errors.js';
import { QueryError } from '../../src/errors.js';

const refused = (message: string, code?: string) => new QueryError('SELECT 1', [], Object.assign(new Error(message), code ? { code } : {}));

describe('isValueError', () => {
  it("DuckDB: Conversion, Out of Range and Invalid Input errors; not a binder's or parser's", () => {
    expect(isValueError(refused("Conversion Error: Could not convert string 'abc' to INT64"))).toBe(true);
    expect(isValueError(refused('Out of Range Error: Overflow in multiplication of INT32 (2147483647 * 2)!'))).toBe(true);
    expect(isValueError(refused('Invalid Input Error: Could not parse timestamp'))).toBe(true);
    expect(isValueError(refused('Binder Error: Referenced column "x" not found in FROM clause!'))).toBe(false);
    expect(isValueError(refused('Parser Error: syntax error at or near "FROM"'))).toBe(false);
  });

  it('PostgreSQL (a server, PGlite): SQLSTATE class 22 only', () => {
    expect(isValueError(refused('invalid input syntax for type bigint: "abc"', '22P02'))).toBe(true);
    expect(isValueError(refused('division by zero', '22012'))).toBe(true);
    expect(isValueError(refused('column "x" does not exist', '42703'))).toBe(false);
    // A class-22 spelling in the text does not count when the engine gave its SQLSTATE.
    expect(isValueError(refused('Conversion Error: looks like DuckDB', '42601'))).toBe(false);
  });

  it("Spark (ANSI): its value classes and class-22 SQLSTATEs; not a plan's refusal", () => {
    expect(isValueError(refused('[CAST_INVALID_INPUT] The value \'abc\' of the type "STRING" cannot be cast to "BIGINT" because it is malformed. SQLSTATE: 22018'))).toBe(true);
    expect(isValueError(refused('[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012'))).toBe(true);
    expect(isValueError(refused('[ARITHMETIC_OVERFLOW] long overflow. SQLSTATE: 22003'))).toBe(true);
    expect(isValueError(refused('[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column cannot be resolved. SQLSTATE: 42703'))).toBe(false);
    expect(isValueError(refused('[TABLE_OR_VIEW_NOT_FOUND] no table'))).toBe(false);
  });

  it('only an engine refusal (QueryError) is one', () => {
    expect(isValueError(new Error("Conversion Error: Could not convert string 'abc' to INT64"))).toBe(false);
  });
});
