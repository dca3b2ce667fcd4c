import { mkdtempSync, openSync, readSync, closeSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MAX_RECORD_BYTES, scanLines } from '../../sources/line-scan.js';
import { countLines } from '../../sources/blank-lines.js';
import { DuckDBInstance, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { QueryError, ScdError, firstLine } from '../../errors.js';
import type { ColumnInfo, Driver, InputFile, Row } from '../driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../driver.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { checkDuckDBExpression } from './duckdb-expression.js';
import type { ExpressionProblem } from '../expression.js';
import { sqlString } from '../dialect.js';

export class DuckDBDriver implements Driver {
  readonly dialect = duckdbDialect;
  private inTransaction = false;
  /** Temporary tables that existed when the transaction began. */
  private tablesBefore = new Set<string>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly location: string,
  ) {}

  /** Open (or create) a DuckDB database file, or ':memory:'. */
  static async create(path: string): Promise<DuckDBDriver> {
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(path);
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
    const connection = await instance.connect();
    const driver = new DuckDBDriver(instance, connection, path);
    // Timestamps with a zone are read and written in UTC, whatever the machine's zone.
    await driver.run(`SET TimeZone = 'UTC'`);
    // Bounded memory by default: DuckDB spills joins, sorts and aggregates to disk beyond it.
    const limit = process.env.SCD_DUCKDB_MEMORY_LIMIT ?? DEFAULT_MEMORY_LIMIT;
    try {
      await driver.run(`SET memory_limit = ${sqlString(limit)}`);
    } catch (e) {
      await driver.close();
      throw new ScdError('USAGE', `SCD_DUCKDB_MEMORY_LIMIT=${limit} is not a memory size DuckDB accepts: ${e instanceof QueryError ? e.reason : firstLine(String(e))}`, {
        fix: "give a size such as 1GB or 512MB, or unset it for the default (1GB)",
      });
    }
    // Memory DuckDB frees goes back to the system sooner (its allocator keeps up to 128 MiB /
    // 512 MiB cached by default): the 5 GB landing file peaked at 2119 MiB without, 1985 with.
    await driver.run(`SET allocator_flush_threshold = '16MiB'`);
    await driver.run(`SET allocator_bulk_deallocation_flush_threshold = '64MiB'`);
    return driver;
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.prepared(sql, params, (p) => p.run());
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

  async columns(table: string): Promise<ColumnInfo[] | undefined> {
    const rows = await this.query(
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns
       WHERE table_name = $1 ORDER BY ordinal_position`,
      [table],
    );
    return rows.length ? rows.map((r) => ({ name: String(r.name), type: String(r.type) })) : undefined;
  }

  async describe(select: string): Promise<ColumnInfo[]> {
    const rows = await this.query(`DESCRIBE ${select}`);
    return rows.map((r) => ({ name: String(r.column_name), type: String(r.column_type) }));
  }

  async checkExpression(expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
    return checkDuckDBExpression(this, expr, columns);
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    // Nothing in a commit depends on the order rows are stored in (line numbers are given while
    // staging, before it), and keeping that order makes DuckDB hold whole results in memory.
    await this.run('SET preserve_insertion_order = false');
    this.tablesBefore = new Set(
      (await this.query(`SELECT table_name AS t FROM duckdb_tables() WHERE database_name = 'temp'`)).map((r) => String(r.t)),
    );
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
      await this.run('SET preserve_insertion_order = true').catch(() => undefined);
    }
  }

  /** DuckDB's statistics follow its writes: nothing to do. */
  async analyzeTemporary(): Promise<void> {}

  /**
   * DuckDB keeps a table dropped inside a transaction in memory until the transaction ends (a
   * rollback would need it), but frees a dropped column at once: the columns go first, so a large
   * commit's intermediate tables do not pile up (and spill) until its COMMIT (docs/DECISIONS.md).
   */
  async dropTemporary(tables: string[]): Promise<void> {
    const q = this.dialect.quote;
    for (const t of tables) {
      // Only a table made in this transaction frees a dropped column (and only one unmodified by
      // an earlier statement of it may be altered): the others are dropped as they are.
      if (this.inTransaction && !this.tablesBefore.has(t)) {
        const cols = (await this.query(
          `SELECT column_name AS name FROM duckdb_columns() WHERE database_name = 'temp' AND table_name = $1 ORDER BY column_index`,
          [t],
        )).map((r) => String(r.name));
        for (const c of cols.slice(1)) await this.run(`ALTER TABLE ${q(t)} DROP COLUMN ${q(c)}`);
      }
      await this.run(`DROP TABLE IF EXISTS ${q(t)}`);
    }
  }

  /** A DuckDB file is held by one process at a time (DB_IN_USE): its applies never interleave. */
  async lockTarget(): Promise<void> {}

  async stageFiles(files: InputFile[], table: string, rejects: string): Promise<void> {
    const q = this.dialect.quote;
    const parts: string[] = [];
    await this.run(`DROP TABLE IF EXISTS ${q(rejects)}`);
    await this.run(
      `CREATE TEMP TABLE ${q(rejects)} (${q(FILE_COLUMN)} VARCHAR, ${q(LINE_COLUMN)} BIGINT, reason VARCHAR, raw VARCHAR)`,
    );
    const scratch = mkdtempSync(path.join(tmpdir(), 'scdkit-stage-'));
    try {
      for (const [i, file] of files.entries()) {
        const part = `_scd_part_${i}`;
        if (statSync(file.path).size === 0) continue;
        await this.run(`DROP TABLE IF EXISTS ${q(part)}`);
        if (await this.stageOne(file, part, rejects, scratch, i)) parts.push(part);
      }
      const union = parts.length
        ? parts.map((p) => `SELECT * FROM ${q(p)}`).join(' UNION ALL BY NAME ')
        : `SELECT NULL::VARCHAR AS ${q(FILE_COLUMN)}, NULL::BIGINT AS ${q(LINE_COLUMN)} WHERE false`;
      await this.run(`DROP TABLE IF EXISTS ${q(table)}`);
      if (parts.length === 1) {
        await this.run(`ALTER TABLE ${q(parts[0]!)} RENAME TO ${q(table)}`);
      } else {
        await this.run(`CREATE TEMP TABLE ${q(table)} AS ${union}`);
        for (const p of parts) await this.run(`DROP TABLE ${q(p)}`);
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }

  /**
   * DuckDB reads "2025-03-01T10:00:00Z" as a TIMESTAMP (converted to UTC, zone dropped). When a
   * column's texts carry a zone (Z or ±hh:mm, judged on its first 1000 values), keep it a
   * TIMESTAMPTZ so that exports write the instant with its Z.
   */
  private async keepZones(file: string, part: string, cols: ColumnInfo[]): Promise<void> {
    const q = this.dialect.quote;
    const stamps = cols.filter((c) => c.type === 'TIMESTAMP');
    if (!stamps.length) return;
    const sample = firstRecords(file, 1000);
    for (const c of stamps) {
      let n: number;
      let z: number;
      if (sample) {
        const texts = sample.map((r) => r[c.name]).filter((v): v is string => typeof v === 'string');
        n = texts.length;
        z = texts.filter((v) => ZONE.test(v)).length;
      } else {
        const r = (await this.query(
          `SELECT CAST(count(*) AS INTEGER) AS n, CAST(count(*) FILTER (WHERE regexp_matches(v, '${ZONE.source}')) AS INTEGER) AS z
           FROM (SELECT ${q(c.name)} AS v FROM read_json($1, columns = {${sqlString(c.name)}: 'VARCHAR'}, format = 'auto', maximum_object_size = ${MAX_RECORD_BYTES}) WHERE ${q(c.name)} IS NOT NULL LIMIT 1000)`,
          [file],
        ))[0]!;
        n = Number(r.n);
        z = Number(r.z);
      }
      if (n > 0 && z === n) await this.run(`ALTER TABLE ${q(part)} ALTER COLUMN ${q(c.name)} TYPE TIMESTAMPTZ`);
    }
  }

  /**
   * Number a freshly read table's rows in file order: record i gets line i + 1 + offset (a CSV's
   * header is line 1). Staging runs outside the commit's transaction, where DuckDB keeps insertion
   * order, so a new table's row ids are the records' order in the file. `row_number() OVER ()`
   * gives the same numbers, but as a window over the whole read (0.5 s of a 1M-line file's 1.2 s).
   */
  private async numberRows(table: string, column: string, offset: number): Promise<void> {
    const q = this.dialect.quote;
    if (this.inTransaction) throw new Error('stageFiles runs before the commit\'s transaction (row ids follow the file only then)');
    await this.run(`ALTER TABLE ${q(table)} ADD COLUMN ${q(column)} BIGINT`);
    await this.run(`UPDATE ${q(table)} SET ${q(column)} = rowid + ${1 + offset}`);
  }

  /**
   * Records numbered in read order are off their physical line after a line that holds none: a
   * CSV's header and its rejected lines, and blank lines (the readers skip them). Number each
   * record past those before it (the j-th such line b has b - j records before it). Blank lines
   * count only when every other line is one record: a record spread over lines (a quoted CSV
   * newline, a pretty-printed object) cannot be placed by them.
   */
  private async skipNonRecordLines(file: string, part: string, scratch: string, i: number, csv?: { rejects: string }): Promise<void> {
    const q = this.dialect.quote;
    const { lines, blanks } = countLines(file);
    const rejected = csv ? Number((await this.query(`SELECT count(DISTINCT line) AS n FROM ${q(csv.rejects)}`))[0]!.n) : 0;
    if (!blanks.length && !rejected) return;
    const records = Number((await this.query(`SELECT count(*) AS n FROM ${q(part)}`))[0]!.n);
    const placed = lines - blanks.length - rejected - (csv ? 1 : 0) === records;
    if (!placed && !rejected) return;
    const list = path.join(scratch, `blank_${i}.csv`);
    writeFileSync(list, `b\n${[...(csv ? [1] : []), ...(placed ? blanks : [])].join('\n')}\n`);
    const nonRecord = `SELECT b FROM read_csv($1, header = true, columns = {'b': 'BIGINT'})${csv ? ` UNION SELECT DISTINCT line FROM ${q(csv.rejects)}` : ''}`;
    const L = q(LINE_COLUMN);
    await this.run(
      `UPDATE ${q(part)} SET ${L} = ${q(part)}.rowid + 1 + s.j FROM (
         SELECT p.rowid AS rid, r.j FROM ${q(part)} p ASOF JOIN (
           SELECT before, max(j) AS j FROM (SELECT b - row_number() OVER (ORDER BY b) AS before, row_number() OVER (ORDER BY b) AS j
             FROM (${nonRecord}) x) GROUP BY before) r
         ON p.rowid + 1 > r.before) s
       WHERE ${q(part)}.rowid = s.rid`,
      [list],
    );
  }

  /** Stage one file; false when it holds no readable record. */
  private async stageOne(file: InputFile, part: string, rejects: string, scratch: string, i: number): Promise<boolean> {
    const q = this.dialect.quote;
    const json = `read_json($1, format = 'auto', sample_size = -1, maximum_object_size = ${MAX_RECORD_BYTES})`;
    const label = file.label ?? file.path;
    if (file.format === 'csv') {
      const rj = `_scd_csv_rejects_${i}`;
      try {
        await this.run(
          `CREATE TEMP TABLE ${q(part)} AS SELECT *, $2::VARCHAR AS ${q(FILE_COLUMN)}
           FROM read_csv($1, header = true, store_rejects = true, rejects_table = '${rj}', rejects_scan = '${rj}_scan')`,
          [file.path, file.label ?? file.path],
        );
        await this.numberRows(part, LINE_COLUMN, 1);
        await this.run(
          `INSERT INTO ${q(rejects)} SELECT $1, line, string_agg(DISTINCT error_message, '; '), any_value(csv_line) FROM ${q(rj)} GROUP BY line`,
          [file.label ?? file.path],
        );
        // Good rows were numbered as if no line had been rejected: each goes past the rejected
        // (and blank) lines before it.
        await this.skipNonRecordLines(file.path, part, scratch, i, { rejects: rj });
        await this.run(`DROP TABLE IF EXISTS ${q(rj)}`);
        await this.run(`DROP TABLE IF EXISTS ${q(rj + '_scan')}`);
        return true;
      } catch (e) {
        throw unreadable(file, e);
      }
    }
    const reader = file.format === 'parquet' ? `read_parquet($1)` : json;
    try {
      const read = (from: string) =>
        this.run(
          `CREATE TEMP TABLE ${q(part)} AS SELECT *, $2::VARCHAR AS ${q(FILE_COLUMN)} FROM ${from}`,
          [file.path, label],
        );
      if (file.format === 'parquet' || !(await this.readSampled(part, file.path, () => read(SAMPLED_JSON)))) await read(reader);
      // A transformed input carries the original line numbers itself.
      const cols = (await this.columns(part)) ?? [];
      if (!cols.some((c) => c.name === LINE_COLUMN)) {
        await this.numberRows(part, LINE_COLUMN, 0);
        if (file.format !== 'parquet' && !(await startsWithBracket(file.path))) await this.skipNonRecordLines(file.path, part, scratch, i);
      }
      if (file.format !== 'parquet') await this.keepZones(file.path, part, cols);
      return true;
    } catch (e) {
      if (file.format === 'parquet' || (await startsWithBracket(file.path))) throw unreadable(file, e);
    }
    // The reader refused the file: find the lines that cannot become records, keep the rest.
    const good = path.join(scratch, `good_${i}.ndjson`);
    const bad = path.join(scratch, `bad_${i}.ndjson`);
    const scan = await scanLines(file.path, good, bad);
    if (scan.bad)
      await this.run(
        `INSERT INTO ${q(rejects)} SELECT $1, line, reason, raw FROM read_json($2, columns = {line: 'BIGINT', reason: 'VARCHAR', raw: 'VARCHAR'}, format = 'newline_delimited', maximum_object_size = ${MAX_RECORD_BYTES * 2})`,
        [label, bad],
      );
    if (!scan.good) return false;
    try {
      await this.run(`CREATE TEMP TABLE ${q(part)} AS SELECT *, $1::VARCHAR AS ${q(FILE_COLUMN)} FROM ${json.replace('$1', '$2')}`, [label, good]);
    } catch (e) {
      throw unreadable(file, e);
    }
    return true;
  }

  /**
   * JSON typed from a sample of its records (DuckDB's default 20,480), kept only when the whole
   * file agrees with the sample: one pass over the raw records checks that every value's JSON type
   * fits its column's sampled type (docs/DECISIONS.md "NDJSON typed from a sample, then checked").
   * A key the sample did not see, or a text that does not parse like the sample's, fails the read
   * itself. False (and no table) when the full detection must decide: nested or undecided columns,
   * a value of another kind, a failed read.
   */
  private async readSampled(part: string, file: string, read: () => Promise<void>): Promise<boolean> {
    const q = this.dialect.quote;
    try {
      await read();
    } catch {
      await this.run(`DROP TABLE IF EXISTS ${q(part)}`);
      return false;
    }
    const cols = ((await this.columns(part)) ?? []).filter((c) => c.name !== FILE_COLUMN);
    const kinds = cols.map((c) => SAMPLED_KINDS[c.type]);
    let agrees = cols.length > 0 && kinds.every((k) => k !== undefined) && cols.every((c) => !/["\\]/.test(c.name));
    // A file no longer than the sample was typed from all of it.
    if (agrees && Number((await this.query(`SELECT count(*) AS n FROM ${q(part)}`))[0]!.n) > JSON_SAMPLE) {
      const paths = cols.map((c) => sqlString(`$."${c.name}"`)).join(', ');
      const checks = kinds.map((k, i) => `bool_and(t[${i + 1}] IS NULL OR t[${i + 1}] IN (${k!.map(sqlString).join(', ')})) AS c${i}`);
      const row = (await this.query(
        `SELECT ${checks.join(', ')} FROM (SELECT json_type(json, [${paths}]) AS t FROM read_json_objects($1, format = 'auto', maximum_object_size = ${MAX_RECORD_BYTES}))`,
        [file],
      ))[0]!;
      agrees = kinds.every((_, i) => row[`c${i}`] !== false);
    }
    if (!agrees) await this.run(`DROP TABLE ${q(part)}`);
    return agrees;
  }

  async copyToFile(select: string, format: 'csv' | 'parquet', file: string): Promise<void> {
    const opts = format === 'csv' ? `FORMAT csv, HEADER true` : `FORMAT parquet`;
    await this.run(`COPY (${select}) TO ${sqlString(file)} (${opts})`);
  }

  async close(): Promise<void> {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

function unreadable(file: InputFile, e: unknown): ScdError {
  const msg = e instanceof QueryError ? e.reason : e instanceof Error ? firstLine(e.message) : String(e);
  const json = /at byte (\d+) in record\/value (\d+): (.*?)\.?\s*$/.exec(msg);
  if (json) {
    return new ScdError('INPUT_UNREADABLE', `record ${json[2]} (byte ${json[1]}): malformed JSON, ${json[3]}`, {
      file: file.path,
      fix: 'correct or remove that record, then apply again; nothing was applied',
    });
  }
  return new ScdError('INPUT_UNREADABLE', `cannot read as ${file.format}: ${msg.replace(/^[A-Za-z ]+Error: /, '')}`, {
    file: file.path,
    fix: 'check the file and its format; nothing was applied',
  });
}

/** DuckDB's default sample_size for JSON. */
const JSON_SAMPLE = 20480;
const SAMPLED_JSON = `read_json($1, format = 'auto', sample_size = ${JSON_SAMPLE}, maximum_object_size = ${MAX_RECORD_BYTES})`;

/**
 * The JSON kinds (json_type) a column typed from the sample may hold for the full detection to
 * have typed it the same. Types not listed (JSON, nested, unsigned, ...) are left to it.
 */
const TEXT = ['VARCHAR', 'NULL'];
const SAMPLED_KINDS: Record<string, string[]> = {
  BIGINT: ['BIGINT', 'UBIGINT', 'NULL'],
  DOUBLE: ['DOUBLE', 'BIGINT', 'UBIGINT', 'NULL'],
  BOOLEAN: ['BOOLEAN', 'NULL'],
  VARCHAR: TEXT,
  DATE: TEXT,
  TIME: TEXT,
  TIMESTAMP: TEXT,
  'TIMESTAMP WITH TIME ZONE': TEXT,
  UUID: TEXT,
};

/** DuckDB's memory limit unless SCD_DUCKDB_MEMORY_LIMIT says otherwise (docs/DECISIONS.md). */
export const DEFAULT_MEMORY_LIMIT = '1GB';

/** A zone at the end of a timestamp text: Z, ±hh, ±hhmm or ±hh:mm. */
const ZONE = /(Z|[+-][0-9][0-9](:?[0-9][0-9])?)$/;

/**
 * The first records of an NDJSON file whose first `limit` lines (within 4 MB) all parse as JSON
 * objects; undefined otherwise (a JSON array, or a line the engine reads better), and then the
 * caller asks the engine.
 */
function firstRecords(file: string, limit: number): Array<Record<string, unknown>> | undefined {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4 * 1024 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8');
    const lines = text.split('\n');
    if (n === buf.length) lines.pop(); // the last line may be cut
    const out: Array<Record<string, unknown>> = [];
    for (const line of lines) {
      if (out.length >= limit) break;
      if (!line.trim()) continue;
      const v: unknown = JSON.parse(line);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
      out.push(v as Record<string, unknown>);
    }
    return out.length ? out : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Whether a JSON file holds an array (its first non-blank byte is '['). */
async function startsWithBracket(file: string): Promise<boolean> {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString('utf8').trimStart();
    return text.startsWith('[');
  } finally {
    closeSync(fd);
  }
}
