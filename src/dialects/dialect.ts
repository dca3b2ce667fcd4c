/**
 * The SQL text hooks an engine provides (docs/DESIGN.md "Dialects and drivers"). The algorithm in plan/ is written
 * once against this interface; it branches on capabilities, never on a dialect's name.
 */
export interface DialectCapabilities {
  /** `last_value(x IGNORE NULLS) OVER (...)` is available. */
  ignoreNullsInWindows: boolean;
  /** Several statements commit or roll back as one (`BEGIN` … `COMMIT`). */
  transactions: boolean;
  /** `CREATE TEMP TABLE` / `CREATE TEMP VIEW`: scratch that only this session sees. */
  temporaryTables: boolean;
  /** A physical row id (Dialect.rowId) addresses a stored row. */
  rowIds: boolean;
  /** `MERGE INTO … USING … ON … WHEN [NOT] MATCHED`. */
  merge: boolean;
  /** `SELECT DISTINCT ON (…)`. */
  distinctOn: boolean;
  /**
   * The engine records a table's changes itself (Delta's change data feed): scdkit reads the
   * target's feed from it instead of writing its own.
   */
  changeFeed: boolean;
  /**
   * The engine reads input files at object-store URLs (`s3://…`, `abfss://…`) itself: a Spark
   * server, with its file systems. Elsewhere such an input is refused before anything is read.
   */
  objectStoreInputs: boolean;
}

/** A dotted name as written (`raw.customer_changes`, `main.analytics`), each part quoted. */
export function quoteDotted(d: Pick<Dialect, 'quote'>, name: string): string {
  return name
    .split('.')
    .map((p) => d.quote(p))
    .join('.');
}

export interface Dialect {
  readonly name: string;
  readonly capabilities: DialectCapabilities;
  /**
   * The engine's physical row id pseudo-column (rowid, ctid): removes rows without a search. A
   * table may hide it behind a column of its own (shadowsRowId): read it only through rowIdOf.
   */
  readonly rowId: string;
  /**
   * Whether a table column of this name hides the row id from SQL in that table (DuckDB: a column
   * named rowid, in any case, is read instead of the pseudo-column, and nothing else reaches it).
   * PostgreSQL refuses a column named like a system column (ctid, xmin, …), so hides nothing.
   */
  shadowsRowId(column: string): boolean;
  /**
   * The form in which the engine tells two quoted names (of tables, of a table's columns) apart:
   * two names with one form are one name to it. DuckDB ignores case (ASCII letters only);
   * PostgreSQL compares quoted names as written.
   */
  nameKey(name: string): string;
  /**
   * Why the engine cannot keep `name` as written as a table's or a column's name (PostgreSQL cuts
   * it at 63 bytes, Delta refuses a space; a NUL on every engine), or undefined if it can
   * (dialects/name-rules.ts).
   */
  nameProblem(name: string): string | undefined;
  /**
   * Where defined, a condition that has the engine fetch the rows whose ids `subquery` gives, by
   * id (PostgreSQL: `ctid = ANY(ARRAY(…))`, a TID scan), where a join or `IN` by row id would read
   * every row of the table (a hash join over the target's ctids). DuckDB's join by row id reads
   * only its row id column, and needs none.
   */
  readonly fetchByRowId?: (rowId: string, subquery: string) => string;
  /**
   * Rows go into stored tables in key order (insertOrder), for inserts of at most this many
   * counted rows: the engine skips a stored block whose min/max range holds none of the keys it
   * looks for (DuckDB's row groups), so a later read of a few keys (a small commit's lookups, a
   * key's history) reads few blocks instead of the table. A larger insert, or one not counted
   * first, is stored as it comes; absent: every insert is (the engine reads by index, or MERGEs).
   */
  readonly keyOrderUpTo?: number;
  /**
   * Appended to a subquery in FROM whose columns the outer query reads several times, so that the
   * engine computes each once (PostgreSQL: ` OFFSET 0`, which keeps the planner from pulling the
   * subquery up and copying its expressions into every use). Empty where the engine computes a
   * repeated expression once by itself (DuckDB eliminates common subexpressions).
   */
  readonly computeOnce: string;
  /**
   * A window function numbering a query's rows 1, 2, … in the order the engine reads them
   * (DuckDB and PostgreSQL: `row_number() OVER ()`; Spark requires an ordered window, and orders
   * by the id it gives each row as read).
   */
  readonly rowNumberAsRead: string;
  /**
   * The one statement that makes a commit's named scratch relation from `select`: `materialized`
   * (the default) holds its rows as they are now, otherwise a view reads them when used. Scratch
   * lives as long as the session, and only it sees it (discarded after each commit).
   */
  scratch(name: string, select: string, materialized?: boolean): string;
  /**
   * The statement that creates a stored table from column definitions (`a BIGINT NOT NULL, …`).
   * `primaryKey`: kept unique where the engine enforces keys; `changeFeed`: the engine records the
   * table's changes itself (capabilities.changeFeed).
   */
  createTable(name: string, columns: string, options?: TableOptions): string;
  /**
   * Where defined (an engine without transactions), the statement that labels the session's next
   * writes with `label` (Delta's commitInfo.userMetadata), so that a commit's writes can be told
   * apart afterwards (execute/delta/recovery.ts).
   */
  commitLabel?(label: string): string;
  /**
   * Where defined, `select` (a parenthesized SELECT) marked as small enough to be sent whole to
   * every task of a join that reads it (Spark: the BROADCAST hint), where the engine would
   * otherwise shuffle the large side of the join to meet it (a MERGE's source against its target).
   */
  sentWhole?(select: string): string;
  /**
   * Where defined (capabilities.changeFeed), a FROM item of the changes the engine recorded for
   * `table` between its versions `from` and `to` (inclusive): the table's columns, `_change_type`
   * and `_commit_version` (the engine's version of the table, not an scdkit commit).
   */
  tableChanges?(table: string, from: number, to: number): string;
  /** Where defined (capabilities.changeFeed), a FROM item of `table` as it stood at its engine version `version`. */
  tableAtVersion?(table: string, version: number): string;
  /**
   * Where defined (an engine whose change feed scdkit writes itself, capabilities.changeFeed
   * false), a scalar subquery: which of the columns `among` (scdkit's own names) the table
   * `table` has, found by name as Driver.columns finds it, as one text of their names joined by
   * commas; NULL when it has none or there is no such table. A commit asks it in the query that
   * reads the target's records, instead of a lookup of its own.
   */
  columnsAmong?(table: string, among: string[]): string;
  /**
   * The statement that gives a scratch relation's rows the name `to`; `from` is not used after
   * (an engine may keep it, where other scratch reads it by name).
   */
  renameScratch(from: string, to: string): string;
  /**
   * The statement that moves a scratch relation to the name `to` and frees the name `from`, for a
   * step that makes `from` anew from what it held (read from `to`). Nothing made before reads `from`.
   */
  moveScratch(from: string, to: string): string;
  /** Quote an identifier (always used; never splice a raw name). */
  quote(identifier: string): string;
  /** Internal column types. */
  readonly types: {
    int: string;
    bigint: string;
    smallint: string;
    text: string;
    bool: string;
    /** The type of rowHash(). */
    hash: string;
    timestamptz: string;
    /** A JSON document column (mixed or nested values). */
    json: string;
    double: string;
    date: string;
    /** A timestamp without a zone (wall-clock time). */
    timestamp: string;
  };
  /** A fixed-point type with `precision` digits, `scale` of them after the point. */
  decimal(precision: number, scale: number): string;
  /** Whether the whole of `expr` (text) matches the regular expression `regex` (POSIX/RE2 subset). */
  matches(expr: string, regex: string): string;
  /** The kind of a JSON value: 'string', 'number', 'boolean', 'null', 'object' or 'array'. */
  jsonKind(expr: string): string;
  /** The text of a JSON value: a string without its quotes, any other value as its JSON text. */
  jsonText(expr: string): string;
  /** A wall-clock timestamp read in the zone `zone` (an IANA name), as an instant. */
  wallClockToInstant(expr: string, zone: string): string;
  /** Any value as a JSON document (for a column whose type is types.json). */
  toJson(expr: string): string;
  /** A fixed-width hash of a list of values, treating NULL as a value. */
  rowHash(exprs: string[]): string;
  /** Text that orders payloads canonically (bytewise); NULL sorts first in each position. */
  canonicalText(exprs: string[]): string;
  /** An aggregate: the value of `expr` on the row with the greatest `by`, NULL values included. */
  lastBy(expr: string, by: string): string;
  /** An aggregate: the value of `expr` on the row with the smallest `by`, NULL values included. */
  firstBy(expr: string, by: string): string;
  /** A struct/row value made of named, typed parts (a tuple sequence). */
  struct(fields: Array<[name: string, expr: string, type: string]>): string;
  /** The type of struct() over parts of the given types. */
  structType(fields: Array<[name: string, type: string]>): string;
  /** Statements to run before creating a table with columns of these types (e.g. CREATE TYPE of a struct). */
  prepareTypes(types: string[]): string[];
  /** `CAST(expr AS type)`, or NULL when the value does not fit. */
  tryCast(expr: string, type: string): string;
  /**
   * `CAST(expr AS type)` of a text, failing the statement where tryCast gives NULL: given where
   * tryCast costs much more than a cast (PostgreSQL's opens a subtransaction per value), so that a
   * batch is first typed with it and again with tryCast only if that statement fails
   * (plan/record-failures.ts mapBatch).
   */
  castOrFail?(text: string, type: string): string;
  /** Text of any value, for messages and raw-record capture. */
  toText(expr: string): string;
  /** A JSON object text of named values, with ISO-8601 dates/timestamps, JSON numbers and nulls. */
  jsonObject(fields: Array<[name: string, expr: string, type: string]>): string;
  /** Whether two types are the same (after normalising spelling). */
  sameType(a: string, b: string): boolean;
  /**
   * Whether every value of `from` fits `to` unchanged (a widening). An integer never widens to a
   * binary float (a double has no 2^53 + 1); it widens to a decimal with as many integer digits.
   */
  widens(from: string, to: string): boolean;
  /**
   * The type a reader gives a column whose files disagree: the wider of the two, and a double for
   * integers in one file and fractions in another (what inference gives a fresh column of both).
   */
  commonType(a: string, b: string): string | undefined;
}

/**
 * The row id of a table with these columns, or undefined when one of them hides it (a user's
 * column named rowid on DuckDB), or when the engine has none: the plan then finds that table's
 * rows by their identity.
 */
export function rowIdOf(d: Dialect, columns: readonly string[]): string | undefined {
  return !d.capabilities.rowIds || columns.some((c) => d.shadowsRowId(c)) ? undefined : d.rowId;
}

/**
 * The end of an INSERT's SELECT that writes its `rows` rows in the order of `columns` (output names
 * of that SELECT), where the dialect stores an insert of that many rows in key order
 * (Dialect.keyOrderUpTo); empty elsewhere.
 */
export function insertOrder(d: Dialect, columns: readonly string[], rows: number | undefined): string {
  return d.keyOrderUpTo !== undefined && columns.length && rows !== undefined && rows <= d.keyOrderUpTo ? ` ORDER BY ${columns.map(d.quote).join(', ')}` : '';
}

/** `select`'s `rows` rows in the order of `columns` (its output names), where the dialect inserts so (insertOrder). */
export function inInsertOrder(d: Dialect, select: string, columns: readonly string[], rows: number | undefined): string {
  const order = insertOrder(d, columns, rows);
  return order ? `SELECT * FROM (${select}) r${order}` : select;
}

export interface TableOptions {
  ifNotExists?: boolean;
  primaryKey?: string[];
  changeFeed?: boolean;
}

/** Stored tables as plain SQL tables with their primary key (DuckDB, PostgreSQL). */
export function sqlTables(quote: (id: string) => string): Dialect['createTable'] {
  return (name, columns, options = {}) =>
    `CREATE TABLE ${options.ifNotExists ? 'IF NOT EXISTS ' : ''}${quote(name)} (${columns}${options.primaryKey ? `, PRIMARY KEY (${options.primaryKey.map(quote).join(', ')})` : ''})`;
}

/** Scratch as temporary tables and views (DuckDB, PostgreSQL). */
export function temporaryScratch(quote: (id: string) => string): Dialect['scratch'] {
  return (name, select, materialized = true) => `CREATE TEMP ${materialized ? 'TABLE' : 'VIEW'} ${quote(name)} AS ${select}`;
}

/** Quote a string literal (only for identifiers in catalog lookups and fixed texts; values are bound). */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** Digits an integer type holds, by the names the engines give (the integer part a decimal needs to hold all of them). */
const INTEGER_DIGITS: Record<string, number> = {
  tinyint: 3,
  int1: 3,
  utinyint: 3,
  smallint: 5,
  int2: 5,
  usmallint: 5,
  integer: 10,
  int: 10,
  int4: 10,
  uinteger: 10,
  bigint: 19,
  int8: 19,
  long: 19,
  ubigint: 20,
  hugeint: 39,
  int128: 39,
  uhugeint: 39,
};

/**
 * The digits an exact number type holds, before and after the point: an integer type's, or a
 * decimal's (DECIMAL(p,s) / numeric(p,s): p - s and s); PostgreSQL's unconstrained `numeric` holds
 * any. Undefined for any other type (binary floats included).
 */
export function exactDigits(type: string): { integer: number; scale: number } | undefined {
  const t = type.trim().toLowerCase();
  if (INTEGER_DIGITS[t] !== undefined) return { integer: INTEGER_DIGITS[t]!, scale: 0 };
  const m = /^(?:decimal|numeric)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(t);
  if (m) return { integer: Number(m[1]) - Number(m[2] ?? 0), scale: Number(m[2] ?? 0) };
  if (t === 'numeric') return { integer: Infinity, scale: Infinity };
  return undefined;
}

/** Whether `to`, a decimal type, holds every value of the exact number type `from` unchanged. */
export function decimalHolds(from: string, to: string): boolean {
  if (!/^(decimal|numeric)\b/i.test(to.trim())) return false;
  const a = exactDigits(from);
  const b = exactDigits(to);
  return !!a && !!b && b.integer >= a.integer && b.scale >= a.scale;
}
