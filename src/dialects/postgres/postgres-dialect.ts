import { createHash } from 'node:crypto';
import type { Dialect } from '../dialect.js';
import { decimalHolds, sqlString, sqlTables, temporaryScratch } from '../dialect.js';
import { postgresNameProblem } from '../name-rules.js';

/**
 * PostgreSQL (13+) SQL text, shared by the `pg` and PGlite drivers.
 * - No IGNORE NULLS in window functions: the plan's fallback path is used.
 * - A tuple sequence is a composite type, created once (prepareTypes) before the tables using it.
 * - tryCast calls `_scd_try_cast`, a small plpgsql helper the driver creates once per schema
 *   (PostgreSQL < 16 has no pg_input_is_valid).
 */

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** Composite types made by structType, by name: their fields (name, type). */
const STRUCTS = new Map<string, Array<[string, string]>>();

/** Remember a composite type's fields (the driver registers those it finds in the catalog). */
export function registerStruct(name: string, fields: Array<[string, string]>): void {
  STRUCTS.set(unquote(name), fields);
}

export function structFields(type: string): Array<[string, string]> | undefined {
  return STRUCTS.get(unquote(type.trim()));
}

function unquote(name: string): string {
  const n = name.trim();
  return n.startsWith('"') && n.endsWith('"') ? n.slice(1, -1).replace(/""/g, '"') : n;
}

const ALIASES: Record<string, string> = {
  int8: 'bigint',
  int4: 'integer',
  int: 'integer',
  int2: 'smallint',
  float8: 'double precision',
  double: 'double precision',
  float4: 'real',
  float: 'double precision',
  bool: 'boolean',
  varchar: 'character varying',
  timestamptz: 'timestamp with time zone',
  timestamp: 'timestamp without time zone',
  timetz: 'time with time zone',
  time: 'time without time zone',
  decimal: 'numeric',
};

/** One spelling per type: lower case, no quotes, aliases resolved. */
export function normType(t: string): string {
  let n = t.trim().replace(/\s+/g, ' ');
  if (n.startsWith('"')) return unquote(n);
  n = n.toLowerCase();
  const m = /^([a-z0-9_ ]+?)(\(.*\))?$/.exec(n);
  if (m) {
    const base = ALIASES[m[1]!] ?? m[1]!;
    n = base + (m[2] ?? '');
  }
  if (n.startsWith('timestamp(') && !n.includes('zone')) n += ' without time zone';
  // timestamptz(3) is timestamp(3) with time zone (the catalog's spelling puts the precision first).
  const zoned = /^(timestamp|time) with(out)? time zone(\(\d\))$/.exec(n);
  if (zoned) n = `${zoned[1]}${zoned[3]} with${zoned[2] ?? ''} time zone`;
  return n;
}

const INTEGER_RANK: Record<string, number> = { smallint: 1, integer: 2, bigint: 3 };

function isInteger(t: string): boolean {
  return INTEGER_RANK[t] !== undefined;
}

function isTimestamp(t: string): boolean {
  return t.startsWith('timestamp') && !t.includes('with time zone');
}

function isTimestamptz(t: string): boolean {
  return t.startsWith('timestamp') && t.includes('with time zone');
}

/** Canonical text of values: '0' for null, else '1' and the value's text; joined by U+001F, bytewise order. */
function canonical(exprs: string[]): string {
  if (exprs.length === 0) return `''`;
  return `(concat_ws(chr(31), ${exprs.map((e) => `CASE WHEN ${e} IS NULL THEN '0' ELSE '1' || CAST(${e} AS text) END`).join(', ')}) COLLATE "C")`;
}

/** A value as it goes into JSON: dates and timestamps as ISO-8601 text (like DuckDB's strftime), the rest as is. */
function isoValue(expr: string, type: string): string {
  const t = normType(type);
  if (isTimestamp(t))
    return `CASE WHEN ${expr} = date_trunc('second', ${expr}) THEN to_char(${expr}, 'YYYY-MM-DD"T"HH24:MI:SS') ELSE to_char(${expr}, 'YYYY-MM-DD"T"HH24:MI:SS.US') END`;
  if (isTimestamptz(t)) {
    const utc = `(${expr} AT TIME ZONE 'UTC')`;
    return `CASE WHEN ${expr} = date_trunc('second', ${expr}) THEN to_char(${utc}, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ELSE to_char(${utc}, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') END`;
  }
  if (t === 'date') return `to_char(${expr}, 'YYYY-MM-DD')`;
  const fields = structFields(type);
  if (fields) return `CASE WHEN ${expr} IS NULL THEN NULL ELSE ${jsonOf(fields.map(([n, ft]) => [n, `(${expr}).${quote(n)}`, ft]))} END`;
  return expr;
}

/** A json value of named fields, in order (row_to_json keeps names and order, with no argument limit). */
function jsonOf(fields: Array<[string, string, string]>): string {
  if (fields.length === 0) return `CAST('{}' AS json)`;
  return `(SELECT row_to_json(_scd_j) FROM (SELECT ${fields.map(([n, e, t]) => `${isoValue(e, t)} AS ${quote(n)}`).join(', ')}) _scd_j)`;
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  capabilities: {
    ignoreNullsInWindows: false,
    transactions: true,
    temporaryTables: true,
    rowIds: true,
    merge: true,
    distinctOn: true,
    changeFeed: false,
    objectStoreInputs: false,
  },
  rowId: 'ctid',
  // CREATE TABLE refuses a column named like a system column (postgres-system-columns.ts).
  shadowsRowId: () => false,
  nameKey: (name) => name,
  nameProblem: postgresNameProblem,
  computeOnce: ' OFFSET 0',
  rowNumberAsRead: 'row_number() OVER ()',
  columnsAmong: (table, among) =>
    `(SELECT string_agg(CAST(attname AS text), ',') FROM pg_attribute WHERE attrelid = to_regclass(${sqlString(quote(table))}) AND attnum > 0 AND NOT attisdropped
      AND attname IN (${among.map(sqlString).join(', ')}))`,
  fetchByRowId: (rowId, subquery) => `${rowId} = ANY(ARRAY(${subquery}))`,
  quote,
  scratch: temporaryScratch(quote),
  createTable: sqlTables(quote),
  renameScratch: (from, to) => `ALTER TABLE ${quote(from)} RENAME TO ${quote(to)}`,
  // A temporary table is renamed, its rows kept: the same statement.
  moveScratch: (from, to) => postgresDialect.renameScratch(from, to),
  types: {
    int: 'integer',
    bigint: 'bigint',
    smallint: 'smallint',
    text: 'text',
    bool: 'boolean',
    hash: 'bigint',
    timestamptz: 'timestamp with time zone',
    json: 'jsonb',
    double: 'double precision',
    date: 'date',
    timestamp: 'timestamp without time zone',
  },
  decimal: (p, s) => `numeric(${p},${s})`,
  matches: (expr, regex) => `(${expr} ~ ${sqlString(`^(?:${regex})$`)})`,
  jsonKind: (expr) => `jsonb_typeof(${expr})`,
  jsonText: (expr) => `(${expr} #>> '{}')`,
  wallClockToInstant: (expr, zone) => `(${expr} AT TIME ZONE ${sqlString(zone)})`,
  toJson: (expr) => `to_jsonb(${expr})`,
  rowHash: (exprs) => `hashtextextended(${canonical(exprs)}, 0)`,
  canonicalText: canonical,
  lastBy: (expr, by) => `(array_agg(${expr} ORDER BY ${by} DESC))[1]`,
  firstBy: (expr, by) => `(array_agg(${expr} ORDER BY ${by}))[1]`,
  struct: (fields) => {
    if (fields.some((f) => f[2] === undefined)) throw new Error('postgres struct() needs the type of every part');
    const type = postgresDialect.structType(fields.map(([n, , t]) => [n, t!]));
    return `CAST(ROW(${fields.map(([, e]) => e).join(', ')}) AS ${type})`;
  },
  structType: (fields) => {
    const norm = fields.map(([n, t]) => [n, normType(t)] as [string, string]);
    const name = `_scd_seq_${createHash('sha1').update(JSON.stringify(norm)).digest('hex').slice(0, 12)}`;
    STRUCTS.set(name, norm);
    return quote(name);
  },
  prepareTypes: (types) => {
    const out: string[] = [];
    for (const t of new Set(types.map((x) => unquote(x)))) {
      const fields = STRUCTS.get(t);
      if (!fields) continue;
      const create = `CREATE TYPE ${quote(t)} AS (${fields.map(([n, ft]) => `${quote(n)} ${ft}`).join(', ')})`;
      out.push(`DO $scd$ BEGIN ${create}; EXCEPTION WHEN duplicate_object THEN NULL; END $scd$`);
    }
    return out;
  },
  tryCast: (expr, type) => {
    const cast = `_scd_try_cast(${expr}, CAST(NULL AS ${type}))`;
    // A polymorphic function returns its type without the modifier: a numeric(p,s) value comes back
    // unscaled ('5' where the column stores '5.0', so its text and hash differ). The value is
    // brought to the type's scale, and one beyond its precision does not fit (an error otherwise).
    const digits = /^\s*(?:numeric|decimal)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*$/i.exec(type);
    if (!digits) return cast;
    const whole = Number(digits[1]) - Number(digits[2] ?? 0);
    return `CASE WHEN abs(${cast}) < 1e${whole} THEN CAST(${cast} AS ${type}) END`;
  },
  castOrFail: (text, type) => `CAST(${text} AS ${type})`,
  toText: (expr) => `CAST(${expr} AS text)`,
  jsonObject: (fields) => `CAST(${jsonOf(fields)} AS text)`,
  sameType: (a, b) => normType(a) === normType(b),
  widens: (from, to) => {
    const f = normType(from);
    const t = normType(to);
    if (f === t) return true;
    if (isInteger(f) && isInteger(t)) return INTEGER_RANK[f]! <= INTEGER_RANK[t]!;
    // Never an integer to a binary float: a double has no 2^53 + 1 (docs/decisions/0026-a-widening-never-changes-a-committed-value.md).
    if (f === 'real' && t === 'double precision') return true;
    if (decimalHolds(f, t)) return true;
    if (f === 'date' && (isTimestamp(t) || isTimestamptz(t))) return true;
    return false;
  },
  commonType: (a, b) => {
    if (postgresDialect.widens(a, b)) return normType(b);
    if (postgresDialect.widens(b, a)) return normType(a);
    const number = (t: string) => isInteger(t) || t === 'real' || t === 'double precision' || t.startsWith('numeric');
    if (number(normType(a)) && number(normType(b))) return 'double precision';
    return undefined;
  },
};

/** The plpgsql helper behind tryCast: an assignment cast (I/O conversion from text), NULL when it fails. */
export function tryCastFunctionSql(): string {
  return `DO $scd$ BEGIN
  IF to_regprocedure(quote_ident(current_schema()) || '._scd_try_cast(anyelement,anycompatible)') IS NULL THEN
    CREATE FUNCTION _scd_try_cast(v anyelement, INOUT t anycompatible) LANGUAGE plpgsql IMMUTABLE AS $f$
    BEGIN
      t := v;
    EXCEPTION WHEN others THEN
      -- A JSON string ("12") converts through its text, as DuckDB's TRY_CAST does.
      BEGIN
        IF pg_typeof(v) IN ('jsonb'::regtype, 'json'::regtype) THEN t := (to_jsonb(v) #>> '{}'); ELSE t := NULL; END IF;
      EXCEPTION WHEN others THEN
        t := NULL;
      END;
    END $f$;
  END IF;
EXCEPTION WHEN duplicate_function OR unique_violation THEN NULL;
END $scd$`;
}

export { sqlString };
