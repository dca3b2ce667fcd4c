import { QueryError } from '../errors.js';
import { sqlState } from './postgres/postgres-errors.js';

/**
 * Whether an engine refused a statement because of a VALUE while it ran (a text that does not
 * convert, a number out of range, a division by zero), as opposed to the statement itself: what
 * each engine says for its class of data exceptions.
 *
 * - PostgreSQL (a server, PGlite): SQLSTATE class 22, "data exception".
 * - DuckDB: the error types Conversion, Out of Range and Invalid Input.
 * - Spark (ANSI mode): the SQLSTATE of class 22 its message names, or its classes for values.
 */
export function isValueError(e: unknown): boolean {
  if (!(e instanceof QueryError)) return false;
  const state = sqlState(e);
  if (state !== undefined) return state.startsWith('22');
  const reason = e.reason;
  return (
    /^(Conversion|Out of Range|Invalid Input) Error:/.test(reason) ||
    /SQLSTATE:\s*22/.test(reason) ||
    /^\[(CAST_INVALID_INPUT|CAST_OVERFLOW|DIVIDE_BY_ZERO|ARITHMETIC_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE|INVALID_FORMAT|DATETIME_OVERFLOW)[\].]/.test(reason)
  );
}

/** Whether an engine refused a statement because it divided by zero (SQLSTATE 22012; Spark's DIVIDE_BY_ZERO). */
export function isDivisionByZero(e: unknown): boolean {
  if (!(e instanceof QueryError)) return false;
  const state = sqlState(e);
  if (state !== undefined) return state === '22012';
  return /^\[DIVIDE_BY_ZERO[\].]/.test(e.reason) || /SQLSTATE:\s*22012/.test(e.reason);
}
