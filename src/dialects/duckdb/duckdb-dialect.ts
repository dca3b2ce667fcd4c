import { type Dialect, decimalHolds, sqlString, sqlTables, temporaryScratch } from '../dialect.js';
import { nulInName } from '../name-rules.js';
import { canonicalDuckdbType } from './duckdb-type-names.js';

const INTEGER_RANK: Record<string, number> = { TINYINT: 1, SMALLINT: 2, INTEGER: 3, BIGINT: 4, HUGEINT: 5 };
const UNSIGNED_RANK: Record<string, number> = { UTINYINT: 1, USMALLINT: 2, UINTEGER: 3, UBIGINT: 4 };

function isNumber(t: string): boolean {
  return !!(INTEGER_RANK[t] || UNSIGNED_RANK[t] || t === 'FLOAT' || t === 'DOUBLE' || t.startsWith('DECIMAL'));
}

/** One spelling per type (TIMESTAMPTZ is TIMESTAMP WITH TIME ZONE): types compare by it. */
const norm = canonicalDuckdbType;

const renameTable = (from: string, to: string) => `ALTER TABLE "${from.replace(/"/g, '""')}" RENAME TO "${to.replace(/"/g, '""')}"`;

export const duckdbDialect: Dialect = {
  name: 'duckdb',
  capabilities: { ignoreNullsInWindows: true, transactions: true, temporaryTables: true, rowIds: true, merge: true, distinctOn: true, changeFeed: false, objectStoreInputs: false },
  rowId: 'rowid',
  // DuckDB binds a name to a table's own column before its virtual columns, case-insensitively.
  shadowsRowId: (column) => asciiLower(column) === 'rowid',
  nameKey: (name) => asciiLower(name),
  nameProblem: nulInName,
  computeOnce: '',
  // Up to 16M rows: DuckDB sorts a larger insert within its memory limit alone, but not beside a
  // large commit's scratch (docs/decisions/0064-rows-in-key-order-on-duckdb.md: the insert that
  // ran out of memory and the one that fit).
  keyOrderUpTo: 16_000_000,
  rowNumberAsRead: 'row_number() OVER ()',
  columnsAmong: (table, among) =>
    `(SELECT string_agg(column_name, ',') FROM duckdb_columns() WHERE table_name = ${sqlString(table)} AND column_name IN (${among.map(sqlString).join(', ')}))`,
  quote: (id) => `"${id.replace(/"/g, '""')}"`,
  scratch: temporaryScratch((id) => `"${id.replace(/"/g, '""')}"`),
  renameScratch: renameTable,
  // A temporary table is renamed, its rows kept: the same statement.
  moveScratch: renameTable,
  createTable: sqlTables((id) => `"${id.replace(/"/g, '""')}"`),
  types: {
    int: 'INTEGER',
    bigint: 'BIGINT',
    smallint: 'SMALLINT',
    text: 'VARCHAR',
    bool: 'BOOLEAN',
    hash: 'UBIGINT',
    timestamptz: 'TIMESTAMPTZ',
    json: 'JSON',
    double: 'DOUBLE',
    date: 'DATE',
    timestamp: 'TIMESTAMP',
  },
  decimal: (p, s) => `DECIMAL(${p},${s})`,
  matches: (expr, regex) => `regexp_full_match(${expr}, ${sqlString(regex)})`,
  // A JSON value as the engine writes it has no leading space: its first character tells its kind
  // (compared as a code point, cheaper than comparing one-character strings:
  // docs/decisions/0027-duckdb-json-reading-takes-the-cheap-test-first.md).
  jsonKind: (expr) =>
    `CASE ascii(CAST(${expr} AS VARCHAR)) WHEN 34 THEN 'string' WHEN 116 THEN 'boolean' WHEN 102 THEN 'boolean' WHEN 110 THEN 'null' WHEN 123 THEN 'object' WHEN 91 THEN 'array' ELSE 'number' END`,
  // A string's text is decoded; any other value's is its JSON text as staged, which a number keeps
  // as written (json_extract_string would read a number with a point as a double and round it).
  jsonText: (expr) => `CASE ascii(CAST(${expr} AS VARCHAR)) WHEN 34 THEN json_extract_string(${expr}, '$') WHEN 110 THEN NULL ELSE CAST(${expr} AS VARCHAR) END`,
  wallClockToInstant: (expr, zone) => `timezone(${sqlString(zone)}, ${expr})`,
  toJson: (expr) => `CAST(to_json(${expr}) AS JSON)`,
  rowHash: (exprs) => `hash(${exprs.length ? exprs.join(', ') : 'NULL'})`,
  canonicalText: (exprs) =>
    exprs.length === 0 ? `''` : `concat_ws(chr(31), ${exprs.map((e) => `CASE WHEN ${e} IS NULL THEN '0' ELSE '1' || CAST(${e} AS VARCHAR) END`).join(', ')})`,
  lastBy: (expr, by) => `arg_max_null(${expr}, ${by})`,
  firstBy: (expr, by) => `arg_min_null(${expr}, ${by})`,
  struct: (fields) => `struct_pack(${fields.map(([n, e]) => `${duckdbDialect.quote(n)} := ${e}`).join(', ')})`,
  structType: (fields) => `STRUCT(${fields.map(([n, t]) => `${duckdbDialect.quote(n)} ${t}`).join(', ')})`,
  prepareTypes: () => [],
  tryCast: (expr, type) => `TRY_CAST(${expr} AS ${type})`,
  toText: (expr) => `CAST(${expr} AS VARCHAR)`,
  jsonObject: (fields) => `to_json(struct_pack(${fields.map(([n, e, t]) => `${duckdbDialect.quote(n)} := ${isoValue(e, t)}`).join(', ')}))`,
  sameType: (a, b) => norm(a) === norm(b),
  widens: (from, to) => {
    const f = norm(from);
    const t = norm(to);
    if (f === t) return true;
    if (INTEGER_RANK[f] && INTEGER_RANK[t]) return INTEGER_RANK[f]! <= INTEGER_RANK[t]!;
    if (UNSIGNED_RANK[f] && (INTEGER_RANK[t] ?? 0) > UNSIGNED_RANK[f]!) return true;
    // Never an integer to a binary float: a DOUBLE has no 2^53 + 1 (docs/decisions/0026-a-widening-never-changes-a-committed-value.md).
    if (f === 'FLOAT' && t === 'DOUBLE') return true;
    if (decimalHolds(f, t)) return true;
    if (f === 'DATE' && (t === 'TIMESTAMP' || t === 'TIMESTAMP WITH TIME ZONE')) return true;
    return false;
  },
  commonType: (a, b) => {
    if (duckdbDialect.widens(a, b)) return norm(b);
    if (duckdbDialect.widens(b, a)) return norm(a);
    if (isNumber(norm(a)) && isNumber(norm(b))) return 'DOUBLE';
    return undefined;
  },
};

/** DuckDB folds the case of ASCII letters only ("É" and "é" are two names to it). */
function asciiLower(name: string): string {
  return name.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** Dates and timestamps as ISO-8601 text; everything else as it is (to_json makes numbers numbers). */
function isoValue(expr: string, type: string): string {
  const t = norm(type);
  if (t === 'TIMESTAMP' || t === 'TIMESTAMP_S' || t === 'TIMESTAMP_MS' || t === 'TIMESTAMP_NS' || t === 'DATETIME')
    return `CASE WHEN microsecond(${expr}) % 1000000 = 0 THEN strftime(${expr}, '%Y-%m-%dT%H:%M:%S') ELSE strftime(${expr}, '%Y-%m-%dT%H:%M:%S.%f') END`;
  if (t === 'TIMESTAMP WITH TIME ZONE' || t === 'TIMESTAMPTZ')
    return `CASE WHEN microsecond(${expr}) % 1000000 = 0 THEN strftime(timezone('UTC', ${expr}), '%Y-%m-%dT%H:%M:%SZ') ELSE strftime(timezone('UTC', ${expr}), '%Y-%m-%dT%H:%M:%S.%fZ') END`;
  if (t === 'DATE') return `strftime(${expr}, '%Y-%m-%d')`;
  if (t.startsWith('STRUCT(')) {
    const parts = splitStructType(type.trim());
    if (parts) return `CASE WHEN ${expr} IS NULL THEN NULL ELSE struct_pack(${parts.map(([n, pt]) => `${n} := ${isoValue(`(${expr}).${n}`, pt)}`).join(', ')}) END`;
  }
  return expr;
}

/** STRUCT("a" BIGINT, "b" TIMESTAMP) → [['"a"','BIGINT'], ['"b"','TIMESTAMP']] (only flat structs). */
function splitStructType(t: string): Array<[string, string]> | undefined {
  const inner = t.slice(t.indexOf('(') + 1, -1);
  if (inner.includes('(')) return undefined;
  return inner.split(',').map((p) => {
    const m = /^\s*("(?:[^"]|"")*"|\S+)\s+(.+)$/.exec(p);
    if (!m) throw new Error(`unexpected struct type ${t}`);
    const name = m[1]!.startsWith('"') ? m[1]! : `"${m[1]}"`;
    return [name, m[2]!.trim()];
  });
}
