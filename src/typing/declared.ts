import type { Dialect } from '../dialects/dialect.js';

/**
 * The column types a flow may declare (`columnTypes`, like Auto Loader's schemaHints or a dbt
 * contract), by the names a person writes. `timestamp` is an instant; `timestamp_ntz` a wall-clock
 * time without a zone.
 */
export const DECLARED_TYPE = /^(string|text|bigint|int|integer|long|double|float|boolean|bool|date|timestamp|timestamp_ntz|json|decimal\(\s*\d+\s*,\s*\d+\s*\))$/i;

export const DECLARED_TYPE_NAMES = 'string, bigint, double, decimal(p,s), boolean, date, timestamp, timestamp_ntz, json';

/** The engine type of a declared type (one DECLARED_TYPE matches). */
export function declaredType(d: Dialect, declared: string): string {
  const t = declared.trim().toLowerCase();
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t);
  if (decimal) return d.decimal(Number(decimal[1]), Number(decimal[2]));
  switch (t) {
    case 'string':
    case 'text':
      return d.types.text;
    case 'bigint':
    case 'int':
    case 'integer':
    case 'long':
      return d.types.bigint;
    case 'double':
    case 'float':
      return d.types.double;
    case 'boolean':
    case 'bool':
      return d.types.bool;
    case 'date':
      return d.types.date;
    case 'timestamp':
      return d.types.timestamptz;
    case 'timestamp_ntz':
      return d.types.timestamp;
    case 'json':
      return d.types.json;
  }
  throw new Error(`not a declared type: ${declared}`);
}
