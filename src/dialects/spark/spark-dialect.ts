import type { Dialect } from '../dialect.js';
import { sparkNameProblem } from '../name-rules.js';

/**
 * Spark SQL (4.0+: staging reads VARIANT; tested on 4.2 with Delta) text, for the Spark Connect engine. What differs
 * from DuckDB and PostgreSQL, and how each hook answers it:
 *
 * - Identifiers in backticks (a backtick doubled).
 * - String literals process backslash escapes ('a\d' is "ad"): every literal goes through
 *   sparkString, never the shared sqlString (a regular expression would lose its backslashes).
 * - ANSI mode (Spark 4's default) fails a statement on a bad cast: tryCast is `try_cast`.
 * - ORDER BY puts NULLs FIRST ascending and LAST descending (DuckDB and PostgreSQL: the reverse
 *   for ascending): plan SQL must write NULLS FIRST/LAST on every key that may be null
 *   (spark-dialect.test.ts pins Spark's default).
 * - `last_value(x IGNORE NULLS)` does not parse (Spark writes `last_value(x) IGNORE NULLS OVER`):
 *   the capability is off, so the plan takes its path without IGNORE NULLS.
 * - No row id: `rowId` fails loudly, naming the dialect (the Delta executor works by identity,
 *   keys + start, never by row id).
 * - Hashes: Spark's hash functions differ from every other engine's, so rowHash is the SHA-256 of
 *   canonicalText, hex: the same value on any engine that computes the same canonical text.
 * - Time zones: Spark's TIMESTAMP is an instant shown in the session time zone; the hooks assume
 *   the session time zone is UTC (the Spark executor sets `spark.sql.session.timeZone` per
 *   session), as do date_format and to_utc_timestamp.
 */

const quote = (id: string) => `\`${id.replace(/`/g, '``')}\``;

/** A Spark SQL string literal: backslashes and quotes escaped (Spark reads '\' as an escape). */
export function sparkString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

const ALIASES: Record<string, string> = {
  INTEGER: 'INT',
  LONG: 'BIGINT',
  SHORT: 'SMALLINT',
  BYTE: 'TINYINT',
  REAL: 'FLOAT',
  BOOL: 'BOOLEAN',
  TIMESTAMP_LTZ: 'TIMESTAMP',
  DEC: 'DECIMAL',
  NUMERIC: 'DECIMAL',
  VARCHAR: 'STRING',
  TEXT: 'STRING',
};

/**
 * One spelling per type: upper case, aliases resolved, DECIMAL with its default (10,0); in nested
 * types no spaces around punctuation and no backticks (DESCRIBE writes struct<a:bigint>).
 */
export function normSparkType(t: string): string {
  const n = t.trim().replace(/\s+/g, ' ').toUpperCase();
  const m = /^([A-Z_]+)\s*(?:\((.*)\))?$/.exec(n);
  if (!m) return n.replace(/`/g, '').replace(/\s*([,:<>()])\s*/g, '$1');
  const base = ALIASES[m[1]!] ?? m[1]!;
  if (base === 'STRING' || base === 'CHAR') return base === 'CHAR' ? n : 'STRING';
  if (base === 'DECIMAL') {
    const [p = '10', s = '0'] = (m[2] ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    return `DECIMAL(${p},${s})`;
  }
  return m[2] === undefined ? base : `${base}(${m[2].replace(/\s+/g, '')})`;
}

const INTEGER_RANK: Record<string, number> = { TINYINT: 1, SMALLINT: 2, INT: 3, BIGINT: 4 };
/** Decimal digits an integer type needs. */
const INTEGER_DIGITS: Record<string, number> = { TINYINT: 3, SMALLINT: 5, INT: 10, BIGINT: 19 };

function decimalParts(t: string): [number, number] | undefined {
  const m = /^DECIMAL\((\d+),(\d+)\)$/.exec(t);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Canonical text of values: '0' for null, else '1' and the value's text; joined by U+001F (bytewise order). */
function canonical(exprs: string[]): string {
  if (exprs.length === 0) return `''`;
  return `concat_ws(chr(31), ${exprs.map((e) => `CASE WHEN ${e} IS NULL THEN '0' ELSE concat('1', CAST(${e} AS STRING)) END`).join(', ')})`;
}

/** A value as it goes into JSON: dates and timestamps as ISO-8601 text (as the other engines write them), the rest as is. */
function isoValue(expr: string, type: string): string {
  const t = normSparkType(type);
  const whole = `date_format(${expr}, 'SSSSSS') = '000000'`;
  if (t === 'TIMESTAMP')
    return `CASE WHEN ${whole} THEN date_format(${expr}, ${sparkString("yyyy-MM-dd'T'HH:mm:ss'Z'")}) ELSE date_format(${expr}, ${sparkString("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")}) END`;
  if (t === 'TIMESTAMP_NTZ')
    return `CASE WHEN ${whole} THEN date_format(${expr}, ${sparkString("yyyy-MM-dd'T'HH:mm:ss")}) ELSE date_format(${expr}, ${sparkString("yyyy-MM-dd'T'HH:mm:ss.SSSSSS")}) END`;
  if (t === 'DATE') return `date_format(${expr}, 'yyyy-MM-dd')`;
  const fields = structTypeFields(type);
  if (fields)
    return `CASE WHEN ${expr} IS NULL THEN NULL ELSE named_struct(${fields.map(([n, ft]) => `${sparkString(n)}, ${isoValue(`${expr}.${quote(n)}`, ft)}`).join(', ')}) END`;
  return expr;
}

/** STRUCT<`a`: BIGINT, b: TIMESTAMP> → [['a','BIGINT'], ['b','TIMESTAMP']] (flat structs only). */
function structTypeFields(type: string): Array<[string, string]> | undefined {
  const t = type.trim();
  if (!/^STRUCT\s*</i.test(t) || !t.endsWith('>')) return undefined;
  const inner = t.slice(t.indexOf('<') + 1, -1);
  if (/[<(]/.test(inner.replace(/DECIMAL\s*\(\s*\d+\s*,\s*\d+\s*\)/gi, ''))) return undefined;
  const parts = inner.replace(/DECIMAL\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)/gi, 'DECIMAL($1;$2)').split(',');
  return parts.map((p) => {
    const m = /^\s*(`(?:[^`]|``)*`|[^\s:]+)\s*:?\s*(.+)$/.exec(p);
    if (!m) throw new Error(`spark: unexpected struct type ${type}`);
    const name = m[1]!.startsWith('`') ? m[1]!.slice(1, -1).replace(/``/g, '`') : m[1]!;
    return [name, m[2]!.trim().replace(';', ',')];
  });
}

export const sparkDialect: Dialect = {
  name: 'spark',
  // Delta: one statement is one commit; no temporary tables, no row ids (writes by identity).
  capabilities: {
    ignoreNullsInWindows: false,
    transactions: false,
    temporaryTables: false,
    rowIds: false,
    merge: true,
    distinctOn: false,
    changeFeed: true,
    objectStoreInputs: true,
  },
  get rowId(): string {
    throw new Error('the spark dialect has no row id: write by identity (keys + start)');
  },
  // No row id to hide: a Delta table is written by identity.
  shadowsRowId: () => false,
  // Spark resolves names without regard to case (spark.sql.caseSensitive is false by default).
  nameKey: (name) => name.toLowerCase(),
  nameProblem: sparkNameProblem,
  computeOnce: '',
  rowNumberAsRead: 'row_number() OVER (ORDER BY monotonically_increasing_id())',
  quote,
  // Materialized scratch is a cached temporary view (computed now, kept in the executors' memory
  // and disk); a view is a temporary view. Both belong to the session.
  // Delta tables; Delta enforces no primary key (scdkit's writes keep identities unique). With
  // deletion vectors a MERGE or DELETE marks the rows it replaces instead of rewriting their files
  // (docs/decisions/0087-deletion-vectors-on-every-scdkit-delta-table.md).
  createTable: (name, columns, options = {}) =>
    `CREATE TABLE ${options.ifNotExists ? 'IF NOT EXISTS ' : ''}${quote(name)} (${columns}) USING delta TBLPROPERTIES (delta.enableDeletionVectors = true${
      options.changeFeed ? ', delta.enableChangeDataFeed = true' : ''
    })`,
  // Spark cannot size a join of scratch before it runs (its estimate of a join multiplies the
  // sides), so without the hint a MERGE shuffles its whole target to meet a small source.
  sentWhole: (select) => `(SELECT /*+ BROADCAST */ * FROM ${select} AS whole)`,
  commitLabel: (label) => `SET spark.databricks.delta.commitInfo.userMetadata = ${label.replace(/[;\n]/g, ' ')}`,
  // Delta's change data feed and time travel (the target is made with the feed on).
  tableChanges: (table, from, to) => `table_changes(${sparkString(table)}, ${Math.trunc(from)}, ${Math.trunc(to)})`,
  tableAtVersion: (table, version) => `${quote(table)} VERSION AS OF ${Math.trunc(version)}`,
  // Spark resolves a temporary view's names when it is read: renaming one would break the views
  // that read it, so the rows get a second name instead.
  renameScratch: (from, to) => `CREATE TEMP VIEW ${quote(to)} AS SELECT * FROM ${quote(from)}`,
  // Nothing reads the moved view by name: its cache goes with it under the new name.
  moveScratch: (from, to) => `ALTER VIEW ${quote(from)} RENAME TO ${quote(to)}`,
  scratch: (name, select, materialized = true) => `${materialized ? 'CACHE TABLE' : 'CREATE TEMP VIEW'} ${quote(name)} AS ${select}`,
  types: {
    int: 'INT',
    bigint: 'BIGINT',
    smallint: 'SMALLINT',
    text: 'STRING',
    bool: 'BOOLEAN',
    hash: 'STRING',
    timestamptz: 'TIMESTAMP',
    json: 'STRING',
    double: 'DOUBLE',
    date: 'DATE',
    timestamp: 'TIMESTAMP_NTZ',
  },
  decimal: (p, s) => `DECIMAL(${p},${s})`,
  // RLIKE finds a match anywhere: anchor it to match the whole text.
  matches: (expr, regex) => `(${expr} RLIKE ${sparkString(`^(?:${regex})$`)})`,
  // A JSON document column holds JSON text as the engine writes it (no leading space).
  jsonKind: (expr) =>
    `CASE left(${expr}, 1) WHEN '"' THEN 'string' WHEN 't' THEN 'boolean' WHEN 'f' THEN 'boolean' WHEN 'n' THEN 'null' WHEN '{' THEN 'object' WHEN '[' THEN 'array' ELSE 'number' END`,
  // A string without a backslash (no escape) is its text between the quotes: most values, and
  // cut out without a JSON parser; any other value is parsed (get_json_object writes numbers anew).
  jsonText: (expr) =>
    `CASE WHEN ${expr} = 'null' THEN NULL WHEN left(${expr}, 1) = '"' AND instr(${expr}, chr(92)) = 0 THEN substr(${expr}, 2, length(${expr}) - 2) ELSE get_json_object(${expr}, '$') END`,
  wallClockToInstant: (expr, zone) => `to_utc_timestamp(${expr}, ${sparkString(zone)})`,
  // to_json takes structs only: wrap the value, keep nulls, and take the value's text back out.
  toJson: (expr) => `regexp_extract(to_json(named_struct('v', ${expr}), map('ignoreNullFields', 'false')), '^\\\\{"v":(.*)\\\\}$', 1)`,
  rowHash: (exprs) => `sha2(${canonical(exprs)}, 256)`,
  canonicalText: canonical,
  lastBy: (expr, by) => `max_by(${expr}, ${by})`,
  firstBy: (expr, by) => `min_by(${expr}, ${by})`,
  struct: (fields) => `named_struct(${fields.map(([n, e, t]) => `${sparkString(n)}, ${t ? `CAST(${e} AS ${t})` : e}`).join(', ')})`,
  structType: (fields) => `STRUCT<${fields.map(([n, t]) => `${quote(n)}: ${t}`).join(', ')}>`,
  prepareTypes: () => [],
  tryCast: (expr, type) => `try_cast(${expr} AS ${type})`,
  toText: (expr) => `CAST(${expr} AS STRING)`,
  jsonObject: (fields) => `to_json(named_struct(${fields.map(([n, e, t]) => `${sparkString(n)}, ${isoValue(e, t)}`).join(', ')}), map('ignoreNullFields', 'false'))`,
  sameType: (a, b) => normSparkType(a) === normSparkType(b),
  widens: (from, to) => {
    const f = normSparkType(from);
    const t = normSparkType(to);
    if (f === t) return true;
    if (INTEGER_RANK[f] && INTEGER_RANK[t]) return INTEGER_RANK[f]! <= INTEGER_RANK[t]!;
    if ((INTEGER_RANK[f] || f === 'FLOAT') && t === 'DOUBLE') return true;
    const td = decimalParts(t);
    if (INTEGER_RANK[f] && td) return td[0] - td[1] >= INTEGER_DIGITS[f]!;
    const fd = decimalParts(f);
    if (fd && td) return td[1] >= fd[1] && td[0] - td[1] >= fd[0] - fd[1];
    if (f === 'DATE' && (t === 'TIMESTAMP' || t === 'TIMESTAMP_NTZ')) return true;
    return false;
  },
  commonType: (a, b) => {
    if (sparkDialect.widens(a, b)) return normSparkType(b);
    if (sparkDialect.widens(b, a)) return normSparkType(a);
    return undefined;
  },
};
