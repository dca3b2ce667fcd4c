import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { firstLine, QueryError, ScdError } from '../../errors.js';
import { type ColumnInfo, type Driver, type InputFile, informationSchemaTables, type Row, type StagedFiles, targetHeld, targetInUse } from '../driver.js';
import { type CopySource, NodePgClient, PGliteClient, type PGliteLike, type PgClient, TEXT_TYPES } from './postgres-client.js';
import { postgresDialect, registerStruct, structFields, tryCastFunctionSql } from './postgres-dialect.js';
import { DISK_FULL, sqlState } from './postgres-errors.js';
import { checkPostgresExpression } from './postgres-expression.js';
import { csvToParquet } from './postgres-parquet.js';
import { rejectLines, stageFiles } from './postgres-stage.js';
import { readConnectionUrl, scrub } from './postgres-url.js';

export { safeLocation } from './postgres-url.js';

import type { ExpressionProblem } from '../expression.js';

export interface PostgresOptions {
  /** The schema the flow's tables live in (created if missing); default public. */
  schema?: string;
  /** Fail at once, instead of waiting, when another process applies to the same target. */
  noWait?: boolean;
  /** Drop the schema when the driver closes (tests: a fresh schema each). */
  dropSchemaOnClose?: boolean;
}

/** advisory lock class id of scdkit targets ("scd" in ASCII) */
const LOCK_CLASS = 0x736364;
const CURSOR_BATCH = 2000;

/**
 * PostgreSQL (13+) through `pg` (a server) or PGlite (in-process): one driver over a small client
 * abstraction. Rows come back as the DuckDB driver gives them (int8, numeric, dates and timestamps
 * as their text), so the plan runs unchanged.
 */
export class PostgresDriver implements Driver {
  readonly dialect = postgresDialect;
  private inTransaction = false;
  private savepoints = 0;
  private cursors = 0;
  private typeNames = new Map<string, string>();
  /**
   * The helper tables staging made (lines, records, parts), whether or not it dropped them since:
   * a small file's are left for discardScratch, which drops them with the commit's scratch, and a
   * failed staging's too (so none is there when the next staging makes it again).
   */
  private readonly stagingTables = new Set<string>();

  private constructor(
    private readonly client: PgClient,
    readonly location: string,
    private readonly schema: string,
    private readonly options: PostgresOptions,
  ) {}

  /** Connect to a server: postgres://user:password@host:port/db (or the PG* variables for what the URL leaves out). */
  static async connect(url: string, options: PostgresOptions = {}): Promise<PostgresDriver> {
    // Read (or refused, in a line that shows none of it) before pg sees it: pg's own errors
    // about a URL it misreads show parts of the password.
    const { location, secrets } = readConnectionUrl(url);
    const { default: pg } = await import('pg');
    const copy = await import('pg-copy-streams');
    const textParser = (v: string) => v;
    const client = new pg.Client({
      connectionString: url,
      types: { getTypeParser: ((oid: number, format?: string) => (TEXT_TYPES.includes(oid) ? textParser : pg.types.getTypeParser(oid, format as 'text'))) as never },
    });
    client.on('error', () => undefined);
    client.on('notice', () => undefined);
    try {
      await client.connect();
    } catch (e) {
      await client.end().catch(() => undefined);
      throw new ScdError('DB_UNREACHABLE', `cannot connect to ${location}: ${scrub(firstLine(e instanceof Error ? e.message : String(e)), [url, ...secrets])}`, {
        fix: 'check host, port, database and credentials (in the URL or the PG* environment variables)',
      });
    }
    return PostgresDriver.start(new NodePgClient(client as never, { from: copy.from, to: copy.to } as never), location, options);
  }

  /** Run on a PGlite instance (tests, or `pglite://` locations); shared instances switch schema per driver. */
  static async fromPGlite(db: PGliteLike, options: PostgresOptions & { owns?: boolean; location?: string } = {}): Promise<PostgresDriver> {
    const schema = options.schema ?? 'public';
    const shared = db as PGliteLike & { __scdSchema?: string };
    const client = new PGliteClient(db, options.owns ?? false, async () => {
      if (shared.__scdSchema === schema) return;
      shared.__scdSchema = schema;
      await db.query(`SET search_path TO ${postgresDialect.quote(schema)}`);
    });
    return PostgresDriver.start(client, options.location ?? 'pglite://memory', options);
  }

  private static async start(client: PgClient, location: string, options: PostgresOptions): Promise<PostgresDriver> {
    const schema = options.schema ?? 'public';
    if (schema.includes('.')) {
      await client.close().catch(() => undefined);
      throw new ScdError('USAGE', `schema "${schema}" is a catalog and a schema, which only Spark has; PostgreSQL's schema is one name`, {
        fix: `name the schema alone (schema: ${schema.split('.').at(-1)}), or run the flow on Spark (database: sc://…)`,
      });
    }
    const driver = new PostgresDriver(client, location, schema, options);
    try {
      await driver.run(`SET TimeZone = 'UTC'`);
      await driver.run(`SET client_min_messages = warning`);
      await driver.run(`SET DateStyle = 'ISO, YMD'`);
      // A '…' string means what it means on DuckDB: a backslash in it is a backslash.
      await driver.run(`SET standard_conforming_strings = on`);
      // No JIT compilation: the planner cannot know the size of the temporary tables an apply
      // makes and reads once, so it compiled most statements, even those that read no row, and
      // the compiling cost more than the statements (docs/decisions/0059-postgresql-runs-without-jit.md).
      await driver.run(`SET jit = off`);
      if (schema !== 'public') await driver.run(`CREATE SCHEMA IF NOT EXISTS ${postgresDialect.quote(schema)}`);
      await driver.run(`SET search_path TO ${postgresDialect.quote(schema)}`);
      await driver.run(tryCastFunctionSql());
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
    return driver;
  }

  async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.exec(sql, params);
  }

  async query(sql: string, params: unknown[] = []): Promise<Row[]> {
    return (await this.exec(sql, params)).rows;
  }

  private async exec(sql: string, params: unknown[]) {
    // Two processes creating one catalog table at once: the loser's IF NOT EXISTS still fails.
    if (/^\s*CREATE\s+(TABLE|SCHEMA)\s+IF\s+NOT\s+EXISTS/i.test(sql)) {
      let out: Awaited<ReturnType<PgClient['query']>> = { rows: [], fields: [] };
      const err = await this.attempt(async () => {
        out = await this.raw(sql, params);
      });
      const code = (err as QueryError | undefined)?.cause && ((err as QueryError).cause as { code?: string }).code;
      if (err && !['23505', '42P07', '42710', '42P06'].includes(String(code))) throw err;
      return out;
    }
    return this.raw(sql, params);
  }

  private async raw(sql: string, params: unknown[]) {
    try {
      return await this.client.query(sql, params.map(param));
    } catch (e) {
      throw new QueryError(sql, params, e);
    }
  }

  /** Run fn; on failure undo its statements (a savepoint inside a transaction) and return the error. */
  async attempt(fn: () => Promise<void>): Promise<unknown | undefined> {
    const sp = this.inTransaction ? `_scd_sp_${++this.savepoints}` : undefined;
    if (sp) await this.raw(`SAVEPOINT ${sp}`, []);
    try {
      await fn();
      if (sp) await this.raw(`RELEASE SAVEPOINT ${sp}`, []);
      return undefined;
    } catch (e) {
      if (sp) await this.raw(`ROLLBACK TO SAVEPOINT ${sp}`, []);
      return e;
    }
  }

  /**
   * Run fn and undo all it did: in a savepoint inside a transaction, else in a transaction of its
   * own; rolled back however fn ends.
   */
  async probe<T>(fn: () => Promise<T>): Promise<T> {
    const sp = this.inTransaction ? `_scd_sp_${++this.savepoints}` : undefined;
    await this.raw(sp ? `SAVEPOINT ${sp}` : 'BEGIN', []);
    try {
      return await fn();
    } finally {
      if (sp) {
        await this.raw(`ROLLBACK TO SAVEPOINT ${sp}`, []);
        await this.raw(`RELEASE SAVEPOINT ${sp}`, []);
      } else await this.raw('ROLLBACK', []);
    }
  }

  async checkExpression(expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
    return checkPostgresExpression(this, expr, columns);
  }

  /**
   * COPY goes through pg-copy-streams, a simple query: its text is scdkit's own (names quoted), and
   * copyToFile's SELECT is first described as one statement.
   */
  async copyFrom(sql: string, source: CopySource): Promise<void> {
    try {
      await this.client.copyFrom(sql, source);
    } catch (e) {
      throw new QueryError(sql, [], e);
    }
  }

  async streamText(sql: string, params: unknown[], onRow: (text: string) => void | Promise<void>): Promise<void> {
    const own = !this.inTransaction;
    const cursor = `_scd_cursor_${++this.cursors}`;
    if (own) await this.run('BEGIN');
    try {
      await this.run(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const r = await this.client.query(`FETCH ${CURSOR_BATCH} FROM ${cursor}`).catch((e) => {
          throw new QueryError(sql, params, e);
        });
        const name = r.fields[0]?.name;
        for (const row of r.rows) {
          const v = name === undefined ? null : row[name];
          await onRow(v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));
        }
        if (r.rows.length < CURSOR_BATCH) break;
      }
      await this.run(`CLOSE ${cursor}`);
      if (own) await this.run('COMMIT');
    } catch (e) {
      if (own) await this.raw('ROLLBACK', []).catch(() => undefined);
      throw e;
    }
  }

  tables(): Promise<Array<{ name: string; view: boolean }>> {
    return informationSchemaTables(this);
  }

  async columns(table: string): Promise<ColumnInfo[] | undefined> {
    const rows = await this.query(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, t.typtype = 'c' AS composite
       FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
       WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [this.dialect.quote(table)],
    );
    for (const r of rows) if (r.composite && !structFields(String(r.type))) await this.registerComposite(String(r.type));
    return rows.length ? rows.map((r) => ({ name: String(r.name), type: String(r.type) })) : undefined;
  }

  /** A composite type found in the catalog (a tuple sequence made by another process): learn its fields.
   *  Looked up by name, not by OID, so the statement is the same on every server (golden fixtures replay it). */
  private async registerComposite(type: string): Promise<void> {
    const fields = await this.query(
      `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
       WHERE attrelid = (SELECT typrelid FROM pg_type WHERE oid = to_regtype($1)) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      [type],
    );
    registerStruct(
      type,
      fields.map((f) => [String(f.name), String(f.type)]),
    );
  }

  async describe(select: string): Promise<ColumnInfo[]> {
    let fields: Array<{ name: string; dataTypeID: number; dataTypeModifier?: number }> = [];
    const err = await this.attempt(async () => {
      fields = (await this.raw(`SELECT * FROM (${select}) _scd_d LIMIT 0`, [])).fields;
    });
    if (err) throw err;
    // PGlite's result has no type modifiers (numeric(20,1) would be numeric): a view's columns do.
    if (fields.some((f) => f.dataTypeModifier === undefined)) return this.describeByView(select);
    const out: ColumnInfo[] = [];
    for (const f of fields) out.push({ name: f.name, type: await this.typeName(f.dataTypeID, f.dataTypeModifier ?? -1) });
    return out;
  }

  /** The columns of a SELECT with their full types (modifiers included), from a temporary view of it. */
  private async describeByView(select: string): Promise<ColumnInfo[]> {
    const view = this.dialect.quote('_scd_describe');
    await this.run(`CREATE OR REPLACE TEMP VIEW ${view} AS SELECT * FROM (${select}) _scd_d`);
    try {
      const rows = await this.query(
        `SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute
         WHERE attrelid = CAST('pg_temp.${'_scd_describe'}' AS regclass) AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      );
      return rows.map((r) => ({ name: String(r.name), type: String(r.type) }));
    } finally {
      await this.run(`DROP VIEW ${view}`);
    }
  }

  private async typeName(oid: number, mod: number): Promise<string> {
    const k = `${oid}/${mod}`;
    if (!this.typeNames.has(k)) {
      const r = (await this.query(`SELECT format_type(CAST($1 AS oid), CAST($2 AS integer)) AS t`, [oid, mod]))[0]!;
      this.typeNames.set(k, String(r.t));
    }
    return this.typeNames.get(k)!;
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn();
    // READ COMMITTED whatever the server's default: a statement after the target's lock must see
    // every commit of the target before it (a REPEATABLE READ snapshot is taken before the lock's
    // wait ends, and would miss the commit the lock waited for).
    await this.run('BEGIN ISOLATION LEVEL READ COMMITTED');
    this.inTransaction = true;
    try {
      const out = await fn();
      await this.run('COMMIT');
      return out;
    } catch (e) {
      await this.raw('ROLLBACK', []).catch(() => undefined);
      throw e;
    } finally {
      this.inTransaction = false;
    }
  }

  /** One statement when the target is free (the try); the waiting lock only when it is not. */
  async lockTarget(target: string, waiting?: (message: string) => void): Promise<void> {
    const key = `${this.schema}.${target}`;
    const r = await this.query(`SELECT pg_try_advisory_xact_lock(${LOCK_CLASS}, hashtext($1)) AS ok`, [key]);
    if (r[0]?.ok) return;
    if (this.options.noWait) throw targetInUse(target, this.location);
    waiting?.(targetHeld(target, this.location));
    await this.run(`SELECT pg_advisory_xact_lock(${LOCK_CLASS}, hashtext($1))`, [key]);
  }

  /**
   * A commit's scratch tables, its staging's helper tables, and with them its views, in one
   * statement: every scratch view reads a scratch table, so CASCADE takes it with that table (a
   * view over a temporary table is itself temporary, so nothing stored depends on them). Temporary
   * tables of other drivers of the session stay.
   */
  async discardScratch(tables: string[]): Promise<void> {
    const all = [...new Set([...tables, ...this.stagingTables])];
    this.stagingTables.clear();
    if (all.length) await this.run(`DROP TABLE IF EXISTS ${all.map(this.dialect.quote).join(', ')} CASCADE`);
  }

  /** Staging made `table` (StageHost): it goes at the latest with the commit's scratch. */
  stagingTable(table: string): string {
    this.stagingTables.add(table);
    return table;
  }

  /** One statement for the views, one for the tables (views first: a table a view reads cannot go before it). */
  async dropTemporary(tables: string[], views: string[] = []): Promise<void> {
    const q = this.dialect.quote;
    if (views.length) await this.run(`DROP VIEW IF EXISTS ${views.map(q).join(', ')}`);
    if (tables.length) await this.run(`DROP TABLE IF EXISTS ${tables.map(q).join(', ')}`);
  }

  /**
   * Autovacuum never analyzes a temporary table, and without statistics the planner guesses its
   * rows from its pages and a default selectivity for each filter: the joins of the batch's keys
   * with the log, the target and its current rows hashed the large side or sorted both for a
   * merge join, slower than hashing the keys (docs/decisions/0060-postgresql-analyzes-a-commits-temporary-tables.md
   * has the figures). ANALYZE samples at most 30,000 rows.
   */
  async analyzeTemporary(table: string, columns?: string[]): Promise<void> {
    const q = this.dialect.quote;
    await this.run(`ANALYZE ${q(table)}${columns?.length ? ` (${columns.map(q).join(', ')})` : ''}`);
  }

  async stageFiles(files: InputFile[], table: string, rejects: string): Promise<StagedFiles> {
    // Staged twice without a commit's end between (a caller that stages by itself): the helper
    // tables the first left go first.
    if (this.stagingTables.size) {
      await this.run(`DROP TABLE IF EXISTS ${[...this.stagingTables].map(this.dialect.quote).join(', ')}`);
      this.stagingTables.clear();
    }
    return stageFiles(this, files, table, rejects);
  }

  async appendRejects(file: string, label: string, rejects: string): Promise<void> {
    await rejectLines(this, file, rejects, label);
  }

  diskFull(error: unknown): string | undefined {
    if (sqlState(error) !== DISK_FULL) return undefined;
    return `free space on the disk of the PostgreSQL server at ${this.location} (its data directory, and its temp_tablespaces if set), then run it again`;
  }

  async copyToFile(select: string, format: 'csv' | 'parquet', file: string): Promise<void> {
    const cols = await this.describe(select);
    const q = this.dialect.quote;
    const proj = cols.map((c) => {
      const v = `_scd_c.${q(c.name)}`;
      if (/^bool/.test(c.type)) return `CASE WHEN ${v} THEN 'true' WHEN NOT ${v} THEN 'false' END AS ${q(c.name)}`;
      if (structFields(c.type)) return `CAST(to_json(${v}) AS text) AS ${q(c.name)}`;
      return `${v}`;
    });
    const copy = `COPY (SELECT ${proj.join(', ')} FROM (${select}) _scd_c) TO STDOUT WITH (FORMAT csv, HEADER true)`;
    const dir = format === 'parquet' ? mkdtempSync(path.join(tmpdir(), 'scdkit-pq-')) : undefined;
    try {
      const csv = dir ? path.join(dir, 'rows.csv') : file;
      try {
        await this.client.copyTo(copy, csv);
      } catch (e) {
        throw new QueryError(copy, [], e);
      }
      if (dir) await csvToParquet(csv, cols, file);
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  }

  async close(): Promise<void> {
    try {
      if (this.inTransaction) await this.raw('ROLLBACK', []).catch(() => undefined);
      if (this.options.dropSchemaOnClose) {
        await this.raw(`DROP SCHEMA IF EXISTS ${this.dialect.quote(this.schema)} CASCADE`, []);
        await this.raw('DISCARD TEMP', []);
      }
    } finally {
      await this.client.close();
    }
  }
}

/** Parameters as PostgreSQL text: JS values pass as they are, objects as JSON. */
function param(v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v)) return JSON.stringify(v);
  return v;
}
