/**
 * Column types of staged text, decided in the engine the way DuckDB's readers decide them
 * (read_json with every record sampled, read_csv's sniffer), as closely as practical:
 * integers → bigint (numeric beyond 64 bits), other numbers → double precision, booleans,
 * 'YYYY-MM-DD' → date, ISO timestamps → timestamp (timestamptz when every value carries a zone),
 * nested or mixed JSON values → jsonb, anything else → text.
 */

const DATE = `[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])`;
const TIME = `([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,9})?)?`;
const ZONE = `(Z|[+-][0-9]{2}(:?[0-9]{2})?)`;
export const RE = {
  date: `^${DATE}$`,
  timestamp: `^${DATE}[T ]${TIME}$`,
  timestamptz: `^${DATE}[T ]${TIME} ?${ZONE}$`,
  int: `^[+-]?(0|[1-9][0-9]*)$`,
  number: `^[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?$`,
  bool: `^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[TtFf])$`,
};

/** Counts over one column's non-null text values (see statsSql). */
export interface TextStats {
  n: number;
  ints: number;
  bigints: number;
  numbers: number;
  bools: number;
  dates: number;
  timestamps: number;
  timestamptzs: number;
  /** Only for JSON: values by JSON kind. */
  jsonNumbers?: number;
  jsonStrings?: number;
  jsonBools?: number;
  jsonNested?: number;
  /** Shapes of date-like string values (digits blanked): 0 none, 1 one, 2 several (DuckDB's one-format-per-column rule). */
  shapes?: number;
  /** Only for JSON: the first record (its src) that has the key. */
  src?: number;
  /** Only for JSON: one shape of its date-like strings (the one when `shapes` is 1). */
  shape?: string;
}

/** SELECT-list expressions counting the kinds of the text expression `v` (NULLs ignored). */
export function textStatsSql(v: string, alias: string): string[] {
  const c = (cond: string, name: string) => `CAST(count(*) FILTER (WHERE ${cond}) AS integer) AS "${alias}_${name}"`;
  // Cheap guards first: the regular expressions run only on values that may match.
  const digit = `${v} ~ '^[+-]?[0-9.]'`;
  const dateLike = `${v} ~ '^[0-9]{4}-'`;
  return [
    `CAST(count(${v}) AS integer) AS "${alias}_n"`,
    c(`${digit} AND ${v} ~ '${RE.int}'`, 'ints'),
    c(`${digit} AND ${v} ~ '${RE.int}' AND (length(${v}) < 19 OR CAST(${v} AS numeric) BETWEEN -9223372036854775808 AND 9223372036854775807)`, 'bigints'),
    c(`${digit} AND ${v} ~ '${RE.number}'`, 'numbers'),
    c(`length(${v}) <= 5 AND ${v} ~ '${RE.bool}'`, 'bools'),
    c(`${dateLike} AND ${v} ~ '${RE.date}'`, 'dates'),
    c(`${dateLike} AND ${v} ~ '${RE.timestamp}'`, 'timestamps'),
    c(`${dateLike} AND ${v} ~ '${RE.timestamptz}'`, 'timestamptzs'),
  ];
}

/**
 * Per key of the jsonb objects in column `b` of `table` (records numbered by "__scd_n"): counts of its values by JSON kind, for
 * strings whether they are dates or timestamps of one format, and the first record that has it
 * (`src`). One pass over the records.
 */
export function jsonStatsSql(table: string, b: string): string {
  // Kind, text and (for date-like strings) shape of each value computed once (OFFSET 0 keeps the planner from inlining them
  // back into every count); the regular expressions run only on values that may match.
  const v = `x.v`;
  const k = `x.k`;
  const c = (cond: string, name: string) => `CAST(count(*) FILTER (WHERE ${cond}) AS integer) AS "${name}"`;
  const str = `${k} = 'string' AND ${v} ~ '^[0-9]{4}-'`;
  return `SELECT x.key,
    ${c(`${k} <> 'null'`, 'n')},
    ${c(`${k} = 'number'`, 'jsonNumbers')},
    ${c(`${k} = 'number' AND ${v} !~ '[.eE]'`, 'ints')},
    ${c(`${k} = 'number' AND ${v} !~ '[.eE]' AND (length(${v}) < 19 OR CAST(${v} AS numeric) BETWEEN -9223372036854775808 AND 9223372036854775807)`, 'bigints')},
    ${c(`${k} = 'string'`, 'jsonStrings')},
    ${c(`${k} = 'boolean'`, 'jsonBools')},
    ${c(`${k} IN ('object', 'array')`, 'jsonNested')},
    ${c(`${str} AND ${v} ~ '${RE.date}'`, 'dates')},
    ${c(`${str} AND ${v} ~ '${RE.timestamp}'`, 'timestamps')},
    ${c(`${str} AND ${v} ~ '${RE.timestamptz}'`, 'timestamptzs')},
    CASE WHEN count(x.shape) = 0 THEN 0 WHEN min(x.shape) = max(x.shape) THEN 1 ELSE 2 END AS "shapes",
    min(x.src) AS "src",
    min(x.shape) AS "shape"
  FROM (SELECT y.*, CASE WHEN ${str.replace(/x\./g, 'y.')} THEN ${shapeSql('y.v')} END AS shape
        FROM (SELECT e.key, r."__scd_n" AS src, jsonb_typeof(e.value) AS k, CASE WHEN jsonb_typeof(e.value) IN ('string', 'number') THEN e.value #>> '{}' END AS v
              FROM ${table} r CROSS JOIN LATERAL jsonb_each(r.${b}) e OFFSET 0) y OFFSET 0) x
  GROUP BY x.key`;
}

/**
 * The shape of a date-like text: digits blanked, a fraction of seconds of any length as '.f'
 * (translate is a character map; the regular expression runs only on texts with a dot).
 */
function shapeSql(v: string): string {
  const blank = `translate(${v}, '0123456789', 'dddddddddd')`;
  return `CASE WHEN strpos(${v}, '.') > 0 THEN regexp_replace(${blank}, '\\.d+', '.f') ELSE ${blank} END`;
}

/** The type of a CSV column from its stats. */
export function csvType(s: TextStats): string {
  if (s.n === 0) return 'text';
  if (s.bools === s.n) return 'boolean';
  if (s.ints === s.n) return s.bigints === s.n ? 'bigint' : 'numeric';
  if (s.numbers === s.n) return 'double precision';
  if (s.dates === s.n) return 'date';
  if (s.timestamps + s.dates === s.n) return 'timestamp without time zone';
  if (s.timestamptzs === s.n) return 'timestamp with time zone';
  return 'text';
}

/** The type of a JSON value column from its stats (n counts non-null values). */
export function jsonType(s: TextStats): string {
  if (s.n === 0) return 'jsonb';
  const kinds = [s.jsonNumbers, s.jsonStrings, s.jsonBools, s.jsonNested].filter((k) => (k ?? 0) > 0).length;
  if (kinds > 1 || s.jsonNested) return 'jsonb';
  if (s.jsonBools) return 'boolean';
  if (s.jsonNumbers) {
    if (s.ints === s.n) return s.bigints === s.n ? 'bigint' : 'numeric';
    return 'double precision';
  }
  // Strings: a date or timestamp column needs one format for all its values.
  if (s.shapes === 1) {
    if (s.dates === s.n) return 'date';
    if (s.timestamps === s.n) return 'timestamp without time zone';
    if (s.timestamptzs === s.n) return 'timestamp with time zone';
  }
  return 'text';
}

/**
 * A condition true when a JSON value could be in a column the full inference types `type`
 * (`shape`: the one shape of its date-like strings), given that the value's text is cast to
 * `type` in the same statement, whose failure is also a misfit: for bigint, the cast refuses a
 * fraction, an exponent and a value beyond 64 bits, so only the kind is checked. The value is
 * given by its kind `k` (`jsonb_typeof` of it: null when the key is absent) and its text `v`
 * (`b->>'key'`), each computed once. Undefined for jsonb, which more values may turn into a
 * scalar type: the full inference decides those.
 */
export function fitsJsonType(k: string, v: string, type: string, shape: string | undefined): string | undefined {
  const none = `coalesce(${k}, 'null') = 'null'`;
  const int = `${k} = 'number' AND ${v} !~ '[.eE]'`;
  const lit = (x: string) => `'${x.replace(/'/g, "''")}'`;
  const dated = (re: string) =>
    // The shape first (a translate, cheaper than the pattern); without a fraction in the shape, a
    // value with one cannot have it, and the translate alone decides.
    shape === undefined
      ? undefined
      : `${none} OR (${k} = 'string' AND ${shape.includes('.') ? shapeSql(v) : `translate(${v}, '0123456789', 'dddddddddd')`} = ${lit(shape)} AND ${v} ~ '${re}')`;
  switch (type) {
    case 'boolean':
      return `coalesce(${k}, 'null') IN ('null', 'boolean')`;
    case 'double precision':
      return `coalesce(${k}, 'null') IN ('null', 'number')`;
    case 'numeric':
      return `${none} OR (${int})`;
    case 'bigint':
      return `coalesce(${k}, 'null') IN ('null', 'number')`;
    case 'text':
      return `coalesce(${k}, 'null') IN ('null', 'string')`;
    case 'date':
      return dated(RE.date);
    case 'timestamp without time zone':
      return dated(RE.timestamp);
    case 'timestamp with time zone':
      return dated(RE.timestamptz);
    default:
      return undefined;
  }
}

/** `text` (a text expression) converted to `type`. */
export function fromText(text: string, type: string): string {
  return type === 'text' ? text : `CAST(${text} AS ${type})`;
}
