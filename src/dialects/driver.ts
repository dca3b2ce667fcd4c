import { ScdError } from '../errors.js';
import type { Dialect } from './dialect.js';
import type { ExpressionProblem } from './expression.js';

export type Row = Record<string, unknown>;

export interface ColumnInfo {
  name: string;
  type: string;
}

export type FileFormat = 'ndjson' | 'json' | 'csv' | 'parquet';

export interface InputFile {
  path: string;
  format: FileFormat;
  /** The path to report in __scd_file (when `path` is a transformed copy); default: path. */
  label?: string;
  /**
   * A transformed copy (JSON lines) whose records carry their original line in LINE_COLUMN and,
   * optionally, their original text in RAW_COLUMN.
   */
  numbered?: boolean;
}

/** A file of an object-store folder, as the engine lists it (Driver.listFolder). */
export interface StoredFile {
  path: string;
  size: number;
  mtimeMs: number;
}

/** One version of a stored table, on an engine that keeps them (Driver.tableHistory). */
export interface TableVersion {
  version: number;
  label: string | null;
  /** The version this one put the table back to (a restore): the versions between are undone. */
  restoredTo?: number;
  /** What made it, in the engine's words (Delta: `WRITE`, `MERGE`, `OPTIMIZE`, …), where known. */
  operation?: string;
}

/** A flow expression as a record-safe evaluation (Driver.recordSafeExpression): two SQL expressions over the record. */
export interface RecordSafeExpression {
  /** True or false, never null where it evaluates; NULL where it failed on the record. */
  value: string;
  /** Where value is NULL: true when the failure was a division by zero. */
  dividedByZero: string;
}

/**
 * Executes SQL on one engine: connect, run, transaction, lock, bulk load (docs/DESIGN.md "Dialects and drivers").
 * Every method sends each SQL string as exactly ONE statement (a prepared statement, the extended
 * protocol): a string that holds two fails, and neither runs.
 */
export interface Driver {
  readonly dialect: Dialect;
  /** Where the data lives, for messages (never with credentials). */
  readonly location: string;
  run(sql: string, params?: unknown[]): Promise<void>;
  /** Rows as plain JSON values: numbers, strings, booleans, null, nested objects. */
  query(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Calls onRow for each row of the first column as text, streamed in chunks. */
  streamText(sql: string, params: unknown[], onRow: (text: string) => void | Promise<void>): Promise<void>;
  columns(table: string): Promise<ColumnInfo[] | undefined>;
  /** The stored tables and views of the flow's schema (not the session's temporary ones). */
  tables(): Promise<Array<{ name: string; view: boolean }>>;
  /** The result columns of a SELECT, without running it. */
  describe(select: string): Promise<ColumnInfo[]>;
  /**
   * Whether `expr` is one boolean expression over a record with these columns, a function of that
   * record alone (dialects/expression.ts), decided by the engine's own parser; undefined when it
   * is. Runs nothing of the expression and leaves nothing behind, also inside a transaction.
   */
  checkExpression(expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined>;
  /**
   * Where the engine aborts a whole transaction on a failed statement (DuckDB): how a checked flow
   * expression is evaluated so that a value it cannot take fails that record alone, inside the
   * one set-based statement. Engines without it run the expression as written, and find the
   * records it fails on when the statement fails (plan/record-failures.ts).
   */
  recordSafeExpression?(expr: string): Promise<RecordSafeExpression>;
  /**
   * Run fn; on failure undo its statements (a savepoint inside a transaction) and return the
   * error, the transaction going on. Where defined; an engine without transactions needs none.
   */
  attempt?(fn: () => Promise<void>): Promise<unknown | undefined>;
  transaction<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Where defined (an engine whose materialized scratch may be recomputed from what it read, after
   * a write to it: Spark's cache), have the rest of the commit read these stored tables as they are
   * now, and return the quoted name to write each by. Scratch made after it reads them unchanged.
   * `latest`: versions known to be the tables' latest (read under the target's lock, nothing
   * written since), not read again.
   */
  pinReads?(tables: string[], latest?: Record<string, number>): Promise<Record<string, string>>;
  /**
   * Where defined (an engine without transactions that versions its tables: Delta), put `table`
   * back as it was at its engine version `version` (execute/delta/recovery.ts chooses it), as a new version.
   */
  restoreTable?(table: string, version: number): Promise<void>;
  /**
   * Where defined (an engine that versions its tables: Delta), the versions of `table`, oldest
   * first, each with the label its writer gave it (Dialect.commitLabel) and, for a version that
   * put the table back to an earlier one, that earlier version. `latest`: only that many of the
   * newest versions.
   */
  tableHistory?(table: string, latest?: number): Promise<TableVersion[]>;
  /**
   * Where defined (an engine that reads object-store URLs itself: DialectCapabilities.objectStoreInputs),
   * the files directly in the folder at `folder` (a URL), as the engine names them (each an URL),
   * with size and modification time, in name order; hidden (`.`, `_`) files left out.
   */
  listFolder?(folder: string): Promise<StoredFile[]>;
  /** Where defined (with listFolder): each file's SHA-256 as hex, read by the engine. */
  hashFiles?(files: string[]): Promise<Map<string, string>>;
  /**
   * Inside a transaction: hold the flow target's lock until the transaction ends, so that two
   * applies of one target never interleave (the second waits, or fails with `noWait`). `waiting`
   * is told once, before a wait begins, that another commit holds the target (targetHeld).
   * `records`: how the lock may read the target's commit records, where a lock is a write of its
   * own that may end with its holder's record (Spark's lease); a transaction's lock ignores it.
   */
  lockTarget(target: string, waiting?: (message: string) => void, records?: LockRecords): Promise<void>;
  /**
   * Load files into a new temporary table with the files' own columns, plus
   * `__scd_file` (path) and `__scd_line` (line or record number in the file); and records that
   * cannot be read (malformed line, invalid UTF-8, ...) into a second temporary table `rejects`
   * with columns `__scd_file`, `__scd_line`, `reason`, `raw` (both tables are always created).
   * Neither table may exist yet (a commit's scratch is discarded after it, plan/apply.ts
   * withScratch; a caller that stages twice drops them in between).
   */
  stageFiles(files: InputFile[], table: string, rejects: string): Promise<StagedFiles>;
  /**
   * Append the lines a line scanner set apart (an NDJSON file of {line, reason, raw}) to a rejects
   * table made by stageFiles, labelled `label`. Every field is taken as written: a raw line is
   * text, never typed from what it looks like (a line "2024-05-30T09:00:00Z" stays that text).
   */
  appendRejects(file: string, label: string, rejects: string): Promise<void>;
  /**
   * Drop temporary views and tables, those of them that exist (views first), and give their memory
   * back now, also inside a transaction: a commit's intermediate tables are dropped as soon as they
   * are used. In as few statements as the engine allows. `madeBefore`: the tables were made before
   * the transaction (staging), which some engines cannot free early.
   */
  dropTemporary(tables: string[], views?: string[], options?: { madeBefore?: boolean }): Promise<void>;
  /**
   * After a commit, succeeded or failed (outside its transaction): drop its scratch tables and
   * views, those that exist. An engine may end the session's scratch as a whole instead (DuckDB
   * opens a new connection): every temporary table of the driver goes, not only these.
   */
  discardScratch(tables: string[], views: string[]): Promise<void>;
  /**
   * Whether holding a commit's scratch makes each later write by name dearer (Spark's cache
   * manager looks through every cached plan at each one): a commit's scratch then goes as soon as
   * its writes have ended, before its record
   * (docs/decisions/0095-a-commits-scratch-goes-before-its-record-on-delta.md). Elsewhere it goes
   * after the commit (plan/scratch.ts withScratch).
   */
  readonly scratchSlowsWrites?: boolean;
  /**
   * Tell the planner how large a temporary table just made is, where the engine does not know by
   * itself (PostgreSQL never analyzes temporary tables; DuckDB keeps its statistics as it writes).
   * `columns`: only those columns' statistics (the table's size always).
   */
  analyzeTemporary(table: string, columns?: string[]): Promise<void>;
  /**
   * Whether `error` is the engine's report of a full disk (DuckDB: "No space left on device";
   * PostgreSQL: SQLSTATE 53100, disk_full), and then what to free, as a fix for a person.
   * Undefined for every other error.
   */
  diskFull(error: unknown): string | undefined;
  /** Write the rows of a SELECT to a csv or parquet file, in the engine. */
  copyToFile(select: string, format: 'csv' | 'parquet', file: string): Promise<void>;
  close(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * The work reads and writes few rows (a commit of fewer than 100,000 records, no truncate, no
   * snapshot): an engine may leave out what pays only for large work (DuckDB keeps insertion
   * order on, which costs memory only where results are large, and saves the statement that turns
   * it off).
   */
  small?: boolean;
}

/**
 * What a target's lock may read of its commit records (Driver.lockTarget). A lock that is a write
 * of its own (Spark's lease row) ends by itself once the target's records reach the commit its
 * holder was to record, so that the holder needs no write to give it back.
 */
export interface LockRecords {
  /** A scalar query of the target's last recorded commit number (0 before the first); its one parameter ($1) is the target. */
  lastRecorded: string;
  /**
   * The commit under the lock writes its record last of its writes when its work succeeds: its
   * lock then ends with that record. False where a write may follow the record (a table source's
   * watermark), which the next holder must not overtake.
   */
  endsWithRecord: boolean;
}

/**
 * `lockTarget` with `noWait` while another commit holds the target (another process, or another
 * driver of this process): the same line on every engine.
 */
export function targetInUse(target: string, location: string): ScdError {
  return new ScdError('DB_IN_USE', `target "${target}" in ${location} is being changed by another scdkit commit (of this process or another)`, {
    fix: 'wait for it to finish and run again, or run without --no-wait to wait for it',
  });
}

/** What a commit that waits for its target says while it waits (`until`: when the wait ends at the latest). */
export function targetHeld(target: string, location: string, until?: string): string {
  return `waiting for target "${target}" in ${location}: another scdkit commit is changing it${until ? ` (${until})` : ''}`;
}

/** The stored tables of the current schema, from the SQL standard's information schema (DuckDB, PostgreSQL), by name (the same answer every time). */
export async function informationSchemaTables(driver: Pick<Driver, 'query'>): Promise<Array<{ name: string; view: boolean }>> {
  const rows = await driver.query(
    `SELECT table_name AS name, table_type AS kind FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = current_schema() ORDER BY table_name`,
  );
  return rows.map((r) => ({ name: String(r.name), view: /view/i.test(String(r.kind)) }));
}

/** Whether `table` (a name, quoted by the caller, or a subquery) has a row where `where` holds: reads one at most. */
export async function hasRow(driver: Driver, table: string, where = 'true', params: unknown[] = []): Promise<boolean> {
  const rows = await driver.query(`SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE ${where} LIMIT 1) x`, params);
  return Number(rows[0]!.n) > 0;
}

/**
 * How a staged column holds its values before scdkit types them (typing/, docs/TYPES.md):
 * - `json`: each value is a JSON value as written in the record (NDJSON, JSON arrays): its kind
 *   (string, number, boolean, object/array) is known, its text is exact;
 * - `text`: each value is text as written (CSV): a number, a time or a word is told by its shape.
 * A staged column that is neither has the reader's own type (Parquet, tables) and is cast as such.
 */
export type Lexical = 'json' | 'text';

/** What staging read: how its columns hold their values, and how many records it read. */
export interface StagedFiles {
  /** Columns whose values are JSON texts or plain texts that scdkit types (Lexical). */
  lexical: Map<string, Lexical>;
  /** Records read (staged + rejected), counted where they were read. */
  records: number;
  /** The staged table's columns, where the reader knows them (saves a lookup). */
  columns?: ColumnInfo[];
}

/**
 * From this many records in a file, staging frees what it made to read them (the file's lines,
 * its parsed records, helper columns) as soon as it is done with them; below it they wait for the
 * commit's end (discardScratch), where they go with the rest at no cost of a statement, and a
 * small file's staged part is copied rather than altered in place (docs/decisions/0056-scratch-is-freed-early-only-when-large.md).
 */
export const LARGE_STAGE = 100_000;

export const FILE_COLUMN = '__scd_file';
export const LINE_COLUMN = '__scd_line';
/** A staged record's text as written in its file (where the reader keeps it). */
export const RAW_COLUMN = '__scd_raw';
