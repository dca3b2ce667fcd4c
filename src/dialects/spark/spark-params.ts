import { sparkString } from './spark-dialect.js';

/**
 * Bind `$1`, `$2`, … of a statement as Spark SQL literals. The plan writes its values as numbered
 * parameters (every engine's statements are the same text); Spark Connect's SQL takes positional
 * `?` markers only in some statement kinds, so the driver binds here, once, for every statement.
 * A `$n` inside a string literal, a quoted identifier or a comment is text, not a parameter.
 */
export function bindParams(sql: string, params: readonly unknown[]): string {
  if (!params.length) return sql;
  let out = '';
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '`' || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end < 0 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === '$' && /[0-9]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (/[0-9]/.test(sql[j] ?? '')) j++;
      const n = Number(sql.slice(i + 1, j));
      if (n < 1 || n > params.length) throw new Error(`statement refers to $${n} but has ${params.length} parameter(s)`);
      out += sparkLiteral(params[n - 1]);
      i = j;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The index after a quoted part that starts at `start` (backslash escapes inside string literals; a doubled quote too). */
function closing(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === '\\' && quote !== '`') i += 2;
    else if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/** A value as a Spark SQL literal (the plan casts it to its type where the type matters). */
export function sparkLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'bigint') return `${v}`;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`cannot bind ${v} as a Spark literal`);
    return Number.isInteger(v) ? `${v}` : `CAST(${sparkString(String(v))} AS DOUBLE)`;
  }
  if (v instanceof Date) return `TIMESTAMP ${sparkString(v.toISOString())}`;
  if (typeof v === 'string') return sparkString(v);
  return sparkString(JSON.stringify(v));
}
