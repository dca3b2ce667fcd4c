/**
 * A library row as one line of JSON, every value as the user holds it: what JSON.stringify would
 * write, except where it would change a value.
 *
 * - A `bigint` is its digits (JSON.stringify throws): stored exactly, as a file's long integer is.
 * - `-0` is `-0.0`, a double with its sign (JSON.stringify writes `0`, an integer).
 * - `±Infinity` is `±1e999`, a number beyond every double, so the record is quarantined as a value
 *   that does not fit its column, as such a number in a file is (JSON.stringify writes `null`).
 *   `NaN` is no number at all: it is written bare, so the record is quarantined as not JSON, with
 *   its text, never stored as null.
 * - Anything with `toJSON` (a `Date`: its ISO text) is what `toJSON` gives; `undefined` members are
 *   left out and `undefined` in an array is null, as JSON.stringify does.
 */
export function rowJson(row: Record<string, unknown>): string {
  return valueJson(row) ?? 'null';
}

function valueJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      if (Object.is(value, -0)) return '-0.0';
      if (Number.isFinite(value)) return JSON.stringify(value);
      return Number.isNaN(value) ? 'NaN' : value > 0 ? '1e999' : '-1e999';
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return valueJson(withJson.toJSON());
  if (Array.isArray(value)) return `[${value.map((v) => valueJson(v) ?? 'null').join(',')}]`;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const text = valueJson(v);
    if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}
