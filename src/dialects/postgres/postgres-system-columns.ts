import { QueryError, ScdError } from '../../errors.js';
import { sqlState } from './postgres-errors.js';

/**
 * PostgreSQL gives every table its system columns (tableoid, xmin, cmin, xmax, cmax, ctid): no
 * table may have a column of those names, so a source that has one cannot be staged, nor stored.
 * (oid is a plain name since PostgreSQL 12.) scdkit reads rows by ctid, which no column can hide.
 */
const DUPLICATE_COLUMN = '42701';

/** The refusal of a source column named like a system column, when that is why `e` failed. */
export function systemColumnClash(e: unknown, file?: string): ScdError | undefined {
  if (!(e instanceof QueryError) || sqlState(e) !== DUPLICATE_COLUMN) return undefined;
  const m = /column name "(.*)" conflicts with a system column name/.exec(e.reason);
  if (!m) return undefined;
  return new ScdError('SOURCE_INVALID', `source column "${m[1]}" has the name of a PostgreSQL system column, which no table can have; nothing was applied`, {
    file,
    fix: `rename the column in the source (a DuckDB database accepts "${m[1]}")`,
  });
}
