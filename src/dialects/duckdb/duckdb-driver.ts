import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DuckDBConnection, DuckDBPreparedStatement } from '@duckdb/node-api';
import { firstLine, QueryError, ScdError } from '../../errors.js';
import { countLines } from '../../files/blank-lines.js';
import { JSON_NUMBER } from '../../files/json-number.js';
import { MAX_RECORD_BYTES } from '../../files/record-limit.js';
import { checkSourceKeys } from '../../files/source-keys.js';
import { checkText } from '../../files/text-records.js';
import { sqlString } from '../dialect.js';
import {
  type ColumnInfo,
  type Driver,
  FILE_COLUMN,
  type InputFile,
  informationSchemaTables,
  type Lexical,
  LINE_COLUMN,
  RAW_COLUMN,
  type RecordSafeExpression,
  type Row,
  type StagedFiles,
  type TransactionOptions,
  targetHeld,
  targetInUse,
} from '../driver.js';
import { type ExpressionProblem, spliced } from '../expression.js';
import { stageSplitCsv } from './duckdb-csv-split.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { checkDuckDBExpression } from './duckdb-expression.js';
import { acquireInstance, isWriteConflict, type SharedInstance } from './duckdb-instances.js';
import { LINES_SQL, stageJsonFile } from './duckdb-json-stage.js';
import { recordSafeForm } from './duckdb-record-evaluation.js';

export class DuckDBDriver implements Driver {
  readonly dialect = duckdbDialect;
  private inTransaction = false;
  /** This connection runs with preserve_insertion_order off (a commit turned it off; staging needs it on). */
  private orderOff = false;
  /** Where DuckDB spills (its temp_directory setting), for the message of a full disk. */
  private tempDirectory = '';
  /** The target locks this driver holds, each released when its transaction ends. */
  private readonly held = new Map<string, () => void>();

  private constructor(
    private readonly shared: SharedInstance,
    private connection: DuckDBConnection,
    readonly location: string,
    private readonly noWait: boolean,
  ) {}

  /**
   * Open (or create) a DuckDB database file, or ':memory:'. A file already open in this process is
   * not opened again: the driver is a new connection to its instance (duckdb-instances.ts).
   */
  static async create(path: string, options: { noWait?: boolean } = {}): Promise<DuckDBDriver> {
    let shared: SharedInstance;
    try {
      shared = await acquireInstance(path);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      const lock = /Conflicting lock is held in .*\(PID (\d+)\)/.exec(msg);
      if (lock || /Could not set lock/.test(msg)) {
        throw new ScdError('DB_IN_USE', `database ${path} is in use by another scdkit process${lock ? ` (pid ${lock[1]})` : ''}`, {
          fix: 'wait for it to finish, then run again',
        });
      }
      throw new ScdError('DB_UNREACHABLE', `cannot open database ${path}: ${firstLine(msg)}`, {
        fix: 'check that the folder exists and is writable',
      });
    }
    let connection: DuckDBConnection;
    try {
      connection = await shared.instance.connect();
    } catch (e) {
      shared.release();
      throw e;
    }
    const driver = new DuckDBDriver(shared, connection, path, options.noWait ?? false);
    // Timestamps with a zone are read and written in UTC, whatever the machine's zone: for every
    // connection of the instance, those opened later too (discardScratch).
    await driver.run(`SET GLOBAL TimeZone = 'UTC'`);
    // Bounded memory by default: DuckDB spills joins, sorts and aggregates to disk beyond it. The
    // limit is the instance's, so it bounds all of the process's drivers of the file together.
    const limit = process.env.SCD_DUCKDB_MEMORY_LIMIT ?? DEFAULT_MEMORY_LIMIT;
    try {
      await driver.run(`SET memory_limit = ${sqlString(limit)}`);
    } catch (e) {
      await driver.close();
      throw new ScdError('USAGE', `SCD_DUCKDB_MEMORY_LIMIT=${limit} is not a memory size DuckDB accepts: ${e instanceof QueryError ? e.reason : firstLine(String(e))}`, {
        fix: 'give a size such as 1GB or 512MB, or unset it for the default (1GB)',
      });
    }
    // Where DuckDB spills what does not fit in memory (default: beside the database file).
    const temp = process.env.SCD_DUCKDB_TEMP_DIRECTORY;
    if (temp) {
      // DuckDB takes any text and fails only when it first spills: the folder is made (or
      // found) now, so that a wrong one is said at once.
      try {
        mkdirSync(temp, { recursive: true });
        await driver.run(`SET temp_directory = ${sqlString(temp)}`);
      } catch (e) {
        await driver.close();
        throw new ScdError(
          'USAGE',
          `SCD_DUCKDB_TEMP_DIRECTORY=${temp} is not a folder DuckDB can use: ${e instanceof QueryError ? e.reason : firstLine(e instanceof Error ? e.message : String(e))}`,
          {
            fix: 'give a folder on a disk with room, or unset it for the default (beside the database file)',
          },
        );
      }
    }
    driver.tempDirectory = String((await driver.query(`SELECT current_setting('temp_directory') AS t`))[0]?.t ?? '');
    // Memory DuckDB frees goes back to the system sooner (its allocator keeps up to 128 MiB /
    // 512 MiB cached by default): it decides whether a large landing file stays within the
    // memory scdkit promises (docs/decisions/0054-duckdbs-memory-is-bounded.md has the figures).
    await driver.run(`SET allocator_flush_threshold = '16MiB'`);
    await driver.run(`SET allocator_bulk_deallocation_flush_threshold = '64MiB'`);
    // A join whose smaller side has up to this many keys filters the larger side's scan by them
    // (50 by default): with rows stored in key order (Dialect.keyOrderUpTo), a small batch's
    // lookups of the target and the key state then read only the row groups that hold its keys.
    await driver.run(`SET GLOBAL dynamic_or_filter_threshold = 4096`);
    return driver;
  }

  /**
   * A commit's scratch goes with its session: the connection is closed and a new one opened, which
   * drops every temporary table and view at once and gives their memory back (no statement, where
   * dropping them would take one each; the new session has the instance's settings, and its own
   * defaults: insertion order kept). Never inside a transaction.
   */
  async discardScratch(): Promise<void> {
    if (this.inTransaction) throw new Error("discardScratch runs after the commit's transaction");
    const next = await this.shared.instance.connect();
    this.connection.closeSync();
    this.connection = next;
    this.orderOff = false;
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.prepared(sql, params, (p) => p.run());
        return;
      } catch (e) {
        // Outside a transaction a conflict (another driver of the file creating the catalog at the
        // same moment) rolled the statement back whole: it runs again, after the other's. The
        // wait grows and is jittered, so that several drivers that conflicted do not meet again.
        if (!this.inTransaction && attempt < 10 && isWriteConflict(e)) {
          await new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 20)));
          continue;
        }
        throw e;
      }
    }
  }

  async query(sql: string, params: unknown[] = []): Promise<Row[]> {
    return this.prepared(sql, params, async (p) => (await p.runAndReadAll()).getRowObjectsJson() as Row[]);
  }

  async streamText(sql: string, params: unknown[], onRow: (text: string) => void | Promise<void>): Promise<void> {
    const result = await this.prepared(sql, params, (p) => p.stream());
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const col = chunk.getColumnValues(0);
      for (const v of col) await onRow(v === null ? 'null' : String(v));
    }
  }

  /**
   * Every statement runs as ONE prepared statement: DuckDB refuses to prepare a string that holds
   * two ("Cannot prepare multiple statements at once"), where running it would run each in turn.
   */
  private async prepared<T>(sql: string, params: unknown[], use: (p: DuckDBPreparedStatement) => Promise<T>): Promise<T> {
    let statement: DuckDBPreparedStatement | undefined;
    try {
      statement = await this.connection.prepare(sql);
      if (params.length) statement.bind(params as never);
      return await use(statement);
    } catch (e) {
      throw new QueryError(sql, params, e);
    } finally {
      statement?.destroySync();
    }
  }

  tables(): Promise<Array<{ name: string; view: boolean }>> {
    return informationSchemaTables(this);
  }

  async columns(table: string): Promise<ColumnInfo[] | undefined> {
    const rows = await this.query(`SELECT column_name AS name, data_type AS type FROM duckdb_columns() WHERE table_name = $1 ORDER BY column_index`, [table]);
    return rows.length ? rows.map((r) => ({ name: String(r.name), type: String(r.type) })) : undefined;
  }

  async describe(select: string): Promise<ColumnInfo[]> {
    const rows = await this.query(`DESCRIBE ${select}`);
    return rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
  }

  async checkExpression(expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
    return checkDuckDBExpression(this, expr, columns);
  }

  async recordSafeExpression(expr: string): Promise<RecordSafeExpression> {
    const guarded = await recordSafeForm(this, expr);
    return { value: `TRY(coalesce(${guarded}, false))`, dividedByZero: `(TRY(coalesce(${spliced(expr)}, false)) IS NOT NULL)` };
  }

  async transaction<T>(fn: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    if (this.inTransaction) return fn();
    // Nothing in a commit depends on the order rows are stored in (line numbers are given while
    // staging, before it), and keeping that order makes DuckDB hold whole results in memory. For
    // this connection only: another driver of the file may be staging meanwhile, and needs it.
    // Turned on again where it is needed (staging), not after each commit: a commit's connection
    // is usually replaced right after it (discardScratch). Small work's results are small: it
    // keeps the order, and saves the statement.
    if (!this.orderOff && !options.small) {
      await this.run('SET SESSION preserve_insertion_order = false');
      this.orderOff = true;
    }
    await this.run('BEGIN TRANSACTION');
    this.inTransaction = true;
    try {
      const out = await fn();
      await this.run('COMMIT');
      return out;
    } catch (e) {
      await this.run('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      this.inTransaction = false;
      // After the COMMIT or ROLLBACK: the next holder's transaction reads what this one wrote.
      for (const release of this.held.values()) release();
      this.held.clear();
    }
  }

  /** DuckDB's statistics follow its writes: nothing to do. */
  async analyzeTemporary(): Promise<void> {}

  /**
   * DuckDB keeps a table dropped inside a transaction in memory until the transaction ends (a
   * rollback would need it), but frees a dropped column at once: the columns go first, so a large
   * commit's intermediate tables do not pile up (and spill) until its COMMIT (docs/decisions/0056-scratch-is-freed-early-only-when-large.md;
   * a small commit leaves its tables to discardScratch instead). One catalog query finds which of
   * the objects exist.
   */
  async dropTemporary(tables: string[], views: string[] = [], options: { madeBefore?: boolean } = {}): Promise<void> {
    if (!tables.length && !views.length) return;
    const q = this.dialect.quote;
    const list = (names: string[]) => (names.length ? names.map(sqlString).join(', ') : 'NULL');
    const found = await this.query(
      `SELECT view_name AS name FROM duckdb_views() WHERE database_name = 'temp' AND view_name IN (${list(views)})
       UNION ALL SELECT table_name FROM duckdb_tables() WHERE database_name = 'temp' AND table_name IN (${list(tables)})`,
    );
    const exists = new Set(found.map((r) => String(r.name)));
    for (const v of views) if (exists.has(v)) await this.run(`DROP VIEW ${q(v)}`);
    // Only a table made in this transaction frees a dropped column (and only one unmodified by an
    // earlier statement of it may be altered): the caller says which were made before it.
    const made = options.madeBefore || !this.inTransaction ? [] : tables.filter((t) => exists.has(t));
    if (made.length) {
      const columns = await this.query(
        `SELECT table_name AS t, column_name AS name FROM duckdb_columns() WHERE database_name = 'temp' AND table_name IN (${list(made)})
         ORDER BY table_name, column_index`,
      );
      // Every column but the first (a table keeps one).
      for (const [i, c] of columns.entries()) if (i > 0 && columns[i - 1]!.t === c.t) await this.run(`ALTER TABLE ${q(String(c.t))} DROP COLUMN ${q(String(c.name))}`);
    }
    for (const t of tables) if (exists.has(t)) await this.run(`DROP TABLE ${q(t)}`);
  }

  /**
   * A DuckDB file is held by one process at a time (DB_IN_USE); inside it, the drivers of the file
   * share its instance and take turns per target: this waits until every earlier commit of the
   * target in the process has ended. It must be the transaction's first statement: DuckDB takes a
   * transaction's snapshot at its first read of the database, so once the turn is held, the
   * transaction reads every commit before it (a snapshot taken earlier would miss them). With
   * `noWait` a target another driver of the process holds (or waits for) fails at once, as a
   * target locked by another process does on PostgreSQL.
   */
  async lockTarget(target: string, waiting?: (message: string) => void): Promise<void> {
    if (!this.inTransaction) throw new Error('lockTarget runs inside a transaction (its end releases the target)');
    if (this.held.has(target)) return;
    const now = this.shared.targets.tryAcquire(target);
    if (now) {
      this.held.set(target, now);
      return;
    }
    if (this.noWait) throw targetInUse(target, this.location);
    waiting?.(targetHeld(target, this.location));
    this.held.set(target, await this.shared.targets.acquire(target));
  }

  /** Staging numbers rows in the order they are read: that order must be kept. */
  private async keepInsertionOrder(): Promise<void> {
    if (!this.orderOff) return;
    await this.run('RESET SESSION preserve_insertion_order');
    this.orderOff = false;
  }

  async stageFiles(files: InputFile[], table: string, rejects: string): Promise<StagedFiles> {
    await this.keepInsertionOrder();
    const q = this.dialect.quote;
    const parts: Part[] = [];
    const lexical = new Map<string, Lexical>();
    let records = 0;
    await this.run(`CREATE TEMP TABLE ${q(rejects)} (${q(FILE_COLUMN)} VARCHAR, ${q(LINE_COLUMN)} BIGINT, reason VARCHAR, raw VARCHAR)`);
    const scratch = mkdtempSync(path.join(tmpdir(), 'scdkit-stage-'));
    try {
      for (const [i, file] of files.entries()) {
        const part = `_scd_part_${i}`;
        if (statSync(file.path).size === 0) continue;
        if (file.format === 'ndjson' || file.format === 'json') {
          const staged = await stageJsonFile(this, file, part, rejects, scratch, i);
          records += staged.records;
          for (const c of staged.columns) lexical.set(c, 'json');
          // The reader knows its part's columns (no lookup).
          parts.push({ name: part, columns: staged.table, text: false, copy: staged.helpers });
          continue;
        }
        const before = await this.count(rejects);
        const readable = await this.stageOne(file, part, rejects, scratch, i);
        records += (readable ? await this.count(part) : 0) + (await this.count(rejects)) - before;
        if (!readable) continue;
        // A CSV's values are its text as written (lexical text); scdkit types them.
        if (file.format === 'csv')
          for (const c of (await this.columns(part)) ?? []) if (c.name !== FILE_COLUMN && c.name !== LINE_COLUMN && !lexical.has(c.name)) lexical.set(c.name, 'text');
        parts.push({ name: part, columns: (await this.columns(part)) ?? [], text: file.format === 'csv', copy: false });
      }
      if (parts.length === 1 && !parts[0]!.copy) {
        await this.run(`ALTER TABLE ${q(parts[0]!.name)} RENAME TO ${q(table)}`);
      } else {
        await this.run(`CREATE TEMP TABLE ${q(table)} AS ${unionSql(parts, lexical)}`);
        // A small file's part waits for the commit's end (discardScratch).
        for (const p of parts) if (!p.copy) await this.run(`DROP TABLE ${q(p.name)}`);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    return { lexical, records, columns: parts.length === 1 ? parts[0]!.columns : undefined };
  }

  private async count(table: string): Promise<number> {
    return Number((await this.query(`SELECT count(*) AS n FROM ${this.dialect.quote(table)}`))[0]!.n);
  }

  async appendRejects(file: string, label: string, rejects: string): Promise<void> {
    await this.keepInsertionOrder();
    await this.run(
      `INSERT INTO ${this.dialect.quote(rejects)} SELECT $1, line, reason, raw FROM read_json($2, columns = {line: 'BIGINT', reason: 'VARCHAR', raw: 'VARCHAR'}, format = 'newline_delimited', maximum_object_size = ${Math.max(MAX_RECORD_BYTES * 2, statSync(file).size + 1024)})`,
      [label, file],
    );
  }

  /**
   * Number a freshly read table's rows in file order: record i gets line i + 1 + offset (a CSV's
   * header is line 1). Staging runs outside the commit's transaction, where DuckDB keeps insertion
   * order, so a new table's row ids are the records' order in the file. `row_number() OVER ()`
   * gives the same numbers, but as a window over the whole read, which DuckDB runs on one thread
   * (docs/decisions/0007-line-numbers-are-physical-lines.md has what it cost).
   */
  private async numberRows(table: string, column: string, offset: number): Promise<void> {
    const q = this.dialect.quote;
    if (this.inTransaction) throw new Error("stageFiles runs before the commit's transaction (row ids follow the file only then)");
    await this.run(`ALTER TABLE ${q(table)} ADD COLUMN ${q(column)} BIGINT`);
    await this.run(`UPDATE ${q(table)} SET ${q(column)} = rowid + ${1 + offset}`);
  }

  /**
   * Run `fn`, which reads `table`'s row ids, with them in reach: a record's column that hides
   * them (a column named rowid, dialect.ts shadowsRowId) steps aside under a reserved name
   * meanwhile, and comes back (a rename changes no data).
   */
  private async withRowId(table: string, fn: () => Promise<void>): Promise<void> {
    const q = this.dialect.quote;
    const hiding = ((await this.columns(table)) ?? []).find((c) => this.dialect.shadowsRowId(c.name));
    if (hiding) await this.run(`ALTER TABLE ${q(table)} RENAME COLUMN ${q(hiding.name)} TO ${q(ROWID_ASIDE)}`);
    await fn();
    if (hiding) await this.run(`ALTER TABLE ${q(table)} RENAME COLUMN ${q(ROWID_ASIDE)} TO ${q(hiding.name)}`);
  }

  /**
   * Records numbered in read order are off their physical line after a line that holds none: a
   * CSV's header and its blank lines (the reader skips them). Number each record past those
   * before it (the j-th such line b has b - j records before it). Only for a file whose every
   * other line is one record (`placedOnLines`).
   */
  private async skipNonRecordLines(part: string, scratch: string, i: number, blanks: number[]): Promise<void> {
    const q = this.dialect.quote;
    if (!blanks.length) return;
    const list = path.join(scratch, `blank_${i}.csv`);
    writeFileSync(list, `b\n${[1, ...blanks].join('\n')}\n`);
    const L = q(LINE_COLUMN);
    await this.run(
      `UPDATE ${q(part)} SET ${L} = ${q(part)}.rowid + 1 + s.j FROM (
         SELECT p.rowid AS rid, r.j FROM ${q(part)} p ASOF JOIN (
           SELECT before, max(j) AS j FROM (SELECT b - row_number() OVER (ORDER BY b) AS before, row_number() OVER (ORDER BY b) AS j
             FROM read_csv($1, header = true, columns = {'b': 'BIGINT'})) x GROUP BY before) r
         ON p.rowid + 1 > r.before) s
       WHERE ${q(part)}.rowid = s.rid`,
      [list],
    );
  }

  /** Give each staged CSV record its line as written (RAW_COLUMN), for the quarantine. */
  private async keepLines(file: string, part: string, i: number): Promise<void> {
    const q = this.dialect.quote;
    const lines = `_scd_csv_lines_${i}`;
    await this.run(`CREATE TEMP TABLE ${q(lines)} AS ${LINES_SQL}`, [file]);
    await this.run(`ALTER TABLE ${q(part)} ADD COLUMN ${q(RAW_COLUMN)} VARCHAR`);
    await this.run(`UPDATE ${q(part)} SET ${q(RAW_COLUMN)} = l.raw FROM (SELECT rowid + 1 AS line, raw FROM ${q(lines)}) l WHERE l.line = ${q(part)}.${q(LINE_COLUMN)}`);
    await this.run(`DROP TABLE ${q(lines)}`);
  }

  /**
   * Stage a CSV with DuckDB's reader when each of its records is one line of it: the file is
   * plain (files/text-records.ts `checkText`: UTF-8, one kind of line ending, LF or CRLF), holds
   * no NUL byte, no quoted value spans lines, and the reader rejects no line. Then record n is the n-th line that
   * is neither the header nor blank, and its raw text is that line. False, with nothing made,
   * otherwise: the file is split in JavaScript (duckdb-csv-split.ts), as PostgreSQL does, because
   * the reader's own rejects carry neighbouring text, re-serialized text and line breaks.
   */
  private async stageCsvByLines(file: InputFile, part: string, scratch: string, i: number): Promise<boolean> {
    const q = this.dialect.quote;
    const plain = checkText(file.path).plain;
    if (plain !== '\n' && plain !== '\r\n') return false;
    const { lines, blanks, continued, nul } = countLines(file.path, { csv: true });
    if (continued.length || nul) return false;
    const rj = `_scd_csv_rejects_${i}`;
    const dropRejects = async () => {
      await this.run(`DROP TABLE IF EXISTS ${q(rj)}`);
      await this.run(`DROP TABLE IF EXISTS ${q(rj + '_scan')}`);
    };
    // RFC 4180 as PostgreSQL and the JavaScript splitter read it: a comma between fields, a
    // double quote around one (never a sniffed separator, which the other engines would not use).
    await this.run(
      `CREATE TEMP TABLE ${q(part)} AS SELECT *, $2::VARCHAR AS ${q(FILE_COLUMN)}
       FROM read_csv($1, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"',
         store_rejects = true, rejects_table = '${rj}', rejects_scan = '${rj}_scan')`,
      [file.path, file.label ?? file.path],
    );
    const rejected = Number((await this.query(`SELECT count(*) AS n FROM ${q(rj)}`))[0]!.n);
    await dropRejects();
    if (rejected || (await this.count(part)) !== lines - blanks.length - 1) {
      await this.run(`DROP TABLE ${q(part)}`);
      return false;
    }
    await this.checkStagedNames(part);
    await this.withRowId(part, async () => {
      await this.numberRows(part, LINE_COLUMN, 1);
      await this.skipNonRecordLines(part, scratch, i, blanks);
      await this.keepLines(file.path, part, i);
    });
    return true;
  }

  /**
   * Stage one CSV or Parquet file; false when it holds no readable record. A file the reader
   * refuses as a whole (not Parquet, truncated) is one rejected record: its path and the reason.
   */
  private async stageOne(file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<boolean> {
    const q = this.dialect.quote;
    const label = file.label ?? file.path;
    try {
      if (file.format === 'csv') {
        if (await this.stageCsvByLines(file, part, scratch, i)) return true;
        return await stageSplitCsv(this, file, part, rejects, scratch, i);
      }
      await this.run(`CREATE TEMP TABLE ${q(part)} AS SELECT *, $2::VARCHAR AS ${q(FILE_COLUMN)} FROM read_parquet($1)`, [file.path, label]);
      await this.checkStagedNames(part);
      await this.withRowId(part, () => this.numberRows(part, LINE_COLUMN, 0));
      return true;
    } catch (e) {
      await this.run(`DROP TABLE IF EXISTS ${q(part)}`);
      // A column name no table may keep is the source's to rename, not one unreadable record.
      if (e instanceof ScdError && e.code === 'SOURCE_INVALID') throw e;
      // A full disk is no fault of the file: the apply stops (plan/disk-full.ts), never quarantines it.
      if (this.diskFull(e)) throw e;
      await this.run(`INSERT INTO ${q(rejects)} VALUES ($1, NULL, $2, $3)`, [label, unreadableReason(file, e), label]);
      return false;
    }
  }

  /** A staged CSV's or Parquet's column names, checked as a JSON file's keys are (files/source-keys.ts). */
  private async checkStagedNames(part: string): Promise<void> {
    const names = ((await this.columns(part)) ?? []).map((c) => c.name).filter((n) => n !== FILE_COLUMN);
    checkSourceKeys(names, this.dialect.nameKey, this.dialect.nameProblem);
  }

  diskFull(error: unknown): string | undefined {
    const text = [error, error instanceof Error ? error.cause : undefined].map((x) => (x instanceof Error ? x.message : String(x ?? ''))).join('\n');
    if (!/No space left on device/i.test(text)) return undefined;
    // A commit writes its new rows into the database file (and its WAL) before COMMIT, and what
    // does not fit in memory into the temp directory.
    const file = this.location === ':memory:' ? '' : `${this.location} and `;
    return `free space on the disk of ${file}DuckDB's temp directory ${this.tempDirectory} (SCD_DUCKDB_TEMP_DIRECTORY moves it to a disk with room; a larger SCD_DUCKDB_MEMORY_LIMIT spills less), then run it again`;
  }

  async copyToFile(select: string, format: 'csv' | 'parquet', file: string): Promise<void> {
    const opts = format === 'csv' ? `FORMAT csv, HEADER true` : `FORMAT parquet`;
    await this.run(`COPY (${select}) TO ${sqlString(file)} (${opts})`);
  }

  /** Close the connection; the process's last driver of the file closes the file (idempotent). */
  async close(): Promise<void> {
    this.connection.closeSync();
    this.shared.release();
  }
}

/** Why a reader refused a whole file, in a line (the engine's words, without its error class). */
function unreadableReason(file: InputFile, e: unknown): string {
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  return `the file cannot be read as ${file.format}: ${msg.replace(/^[A-Za-z ]+Error: /, '')}`;
}

/** Where a record's column named rowid waits while its table's rows are numbered (withRowId). */
const ROWID_ASIDE = '__scd_rowid_aside';

/** DuckDB's memory limit unless SCD_DUCKDB_MEMORY_LIMIT says otherwise (docs/decisions/0054-duckdbs-memory-is-bounded.md). */
export const DEFAULT_MEMORY_LIMIT = '1GB';

/** One staged table of several parts (UNION BY NAME); a column read as JSON in one part is JSON in all. */
interface Part {
  name: string;
  columns: ColumnInfo[];
  /** A CSV's part: its values are text as written. */
  text: boolean;
  /** A small JSON file's part, with helper columns beside `columns`: copied, left for discardScratch. */
  copy: boolean;
}

/** JSON number syntax (no leading zeros, no sign but minus). */

function unionSql(parts: Part[], lexical: Map<string, Lexical>): string {
  const q = duckdbDialect.quote;
  if (!parts.length) return `SELECT NULL::VARCHAR AS ${q(FILE_COLUMN)}, NULL::BIGINT AS ${q(LINE_COLUMN)} WHERE false`;
  return parts
    .map((p) => {
      // A column one part holds as JSON is JSON in all: another part's text is a JSON string.
      // A CSV's text that spells a JSON number or boolean is that value, as the JSON parts write it.
      const asJson = (c: ColumnInfo) =>
        p.text
          ? `CASE WHEN regexp_full_match(${q(c.name)}, '${JSON_NUMBER}') OR ${q(c.name)} IN ('true', 'false') THEN CAST(${q(c.name)} AS JSON) ELSE CAST(to_json(${q(c.name)}) AS JSON) END`
          : `CAST(to_json(${q(c.name)}) AS JSON)`;
      const cols = p.columns.map((c) => (lexical.get(c.name) === 'json' && c.type !== 'JSON' ? `${asJson(c)} AS ${q(c.name)}` : q(c.name)));
      return `SELECT ${cols.join(', ')} FROM ${q(p.name)}`;
    })
    .join(' UNION ALL BY NAME ');
}
