import { QueryError, ScdError } from '../../errors.js';
import { allEnded } from '../all-ended.js';
import { quoteDotted } from '../dialect.js';
import type { ColumnInfo, Driver, InputFile, LockRecords, Row, StagedFiles, StoredFile, TableVersion } from '../driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../driver.js';
import type { ExpressionProblem } from '../expression.js';
import { spliced } from '../expression.js';
import { againOnPlanValidation, EXCLUDED_RULES, planRefusal } from './plan-refusals.js';
import { deferrable, scriptable, sqlScript } from './scripts.js';
import { SparkConnectClient } from './spark-connect-client.js';
import { sparkDialect, sparkString } from './spark-dialect.js';
import { hashSparkFiles, listSparkFolder } from './spark-folders.js';
import { SparkLease } from './spark-lock.js';
import { bindParams } from './spark-params.js';
import { literalSparkPath } from './spark-paths.js';
import { stageSparkFiles } from './spark-stage.js';

export interface SparkOptions {
  /** The Spark database (schema) of the flow's tables; created if missing. Default `default`. */
  schema?: string;
  /** Fail at once, instead of waiting, when another commit holds the target's lease. */
  noWait?: boolean;
  /** Drop the database when the driver closes (tests: a fresh one each). */
  dropSchemaOnClose?: boolean;
}

const q = sparkDialect.quote;

/**
 * Spark with Delta Lake through Spark Connect (docs/SPARK.md). One server session per driver;
 * statements name the flow's tables unqualified, in the session's current database.
 *
 * What differs from the transactional engines, and where it is handled:
 * - No multi-statement transaction: `transaction` runs its work as it comes; each write is a
 *   Delta commit of its own, the target's one MERGE among them, and the commit record last
 *   (plan/apply.ts recovers an interrupted commit from that order, execute/delta/recovery.ts).
 * - No advisory lock: a lease row in a Delta table (spark-lock.ts), renewed while the commit works,
 *   ended by the commit's record or given back when the work ends; a write after the lease may have
 *   run out is refused.
 * - Scratch: cached temporary views of the session (Dialect.scratch), uncached after each commit.
 * - Parameters are bound as literals by the driver (spark-params.ts).
 */
export class SparkDriver implements Driver {
  readonly dialect = sparkDialect;
  readonly location: string;
  private readonly lease: SparkLease;
  /** The lease being given back at the end of a transaction (released() waits for it). */
  private releasing: Promise<void> | undefined;
  /** Tables read through a pinned temporary view (pinReads) until the commit's scratch goes. */
  private readonly pinned = new Set<string>();
  /** The temporary views this session made through run(), oldest first (discardScratch drops them newest first). */
  private readonly made: string[] = [];
  /** Which of `made` hold no cached data (made by CREATE … VIEW): discardScratch drops them after the cached ones. */
  private readonly plain = new Set<string>();
  /** The schema as SQL names it: `schema`, or `catalog`.`schema` (Unity Catalog). */
  private readonly schemaName: string;
  /**
   * Statements that make scratch (a cached or plain temporary view), not sent yet: they go with
   * the next statement that needs the server, as one SQL script (one round trip). Each with the
   * view it makes.
   */
  private readonly deferred: Array<{ sql: string; makes: string }> = [];
  /**
   * Whether the last discardScratch dropped every view and none was made since: a commit's scratch
   * may go before its record (scratchSlowsWrites), and the drop at its end then sends nothing.
   */
  private scratchGone = false;
  /** Every write by name has the cache manager look through each cached plan, and a walk's cached plans carry their whole lineage. */
  readonly scratchSlowsWrites = true;

  private constructor(
    private readonly client: SparkConnectClient,
    schema: string,
    private readonly options: SparkOptions,
  ) {
    this.location = `${client.location}/${schema}`;
    this.schemaName = sparkSchemaName(schema);
    this.lease = new SparkLease({ execute: (sql) => this.client.execute(sql), query: (sql) => this.client.query(sql) }, this.location);
  }

  /** Connect to a Spark Connect server (`sc://host:port/;token=…`), use (and create) the schema. */
  static async connect(url: string, options: SparkOptions = {}): Promise<SparkDriver> {
    const client = SparkConnectClient.connect(url);
    const schema = options.schema ?? 'default';
    const driver = new SparkDriver(client, schema, options);
    try {
      // Everything scdkit needs beyond Delta's two server settings, per session.
      await client.execute(`SET spark.sql.session.timeZone = UTC`);
      // A temporary view keeps its analyzed plan: a commit's scratch reads scratch, and re-analyzing
      // the text of every view below it at each statement costs seconds for a few rows.
      await client.execute(`SET spark.sql.legacy.storeAnalyzedPlanForView = true`);
      // A stored plan with CTE definitions, read by several views of one statement, lost a column
      // a CTE made (docs/decisions/0082-spark-sessions-inline-ctes-in-commands.md): inline them instead.
      await client.execute(`SET spark.sql.legacy.inlineCTEInCommands = true`);
      // Adaptive execution re-describes the whole plan as text each time a stage ends (for the UI's
      // listeners, whether or not a UI runs), and a commit's scratch reads cached scratch whose
      // plans the description repeats at every reference: the server spent more time writing that
      // text than doing the commit's work (docs/decisions/0088-no-adaptive-query-execution-in-scdkits-spark-sessions.md).
      // Cached scratch has exact sizes, so the plan made up front chooses its joins as well.
      await client.execute(`SET spark.sql.adaptive.enabled = false`);
      // A member name that appears twice in a JSON record keeps its last value, as on every engine
      // (docs/decisions/0202-a-repeated-member-keeps-its-last-value.md): the map a JSON line's
      // entries are rebuilt into (spark-stage.ts) and the variant of a .json document would
      // otherwise stop the statement.
      await client.execute(`SET spark.sql.mapKeyDedupPolicy = LAST_WIN`);
      await client.execute(`SET spark.sql.variant.allowDuplicateKeys = true`);
      await client.execute(`CREATE DATABASE IF NOT EXISTS ${sparkSchemaName(schema)}`);
      await client.execute(`USE ${sparkSchemaName(schema)}`);
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    }
    return driver;
  }

  /**
   * A statement that makes scratch waits for the next one that needs the server (scripts.ts);
   * any other is sent now, after the waiting ones.
   */
  async run(sql: string, params: unknown[] = []): Promise<void> {
    if (this.releasing) await this.released();
    // A commit writes only while its target's lease holds for sure (spark-lock.ts).
    this.lease.check();
    const text = bindParams(sql, params);
    const made = viewMadeBy(sql);
    if (made) {
      this.scratchGone = false;
      this.made.push(made);
      // A view CREATE makes holds no data; CACHE TABLE's does, and a renamed view keeps its cache.
      if (/^\s*CREATE\b/i.test(sql)) this.plain.add(made);
      else if (!/^\s*ALTER\b/i.test(sql)) this.plain.delete(made);
    }
    if (made && deferrable(text)) {
      this.deferred.push({ sql: text, makes: made });
      return;
    }
    await this.send(text, 'execute');
  }

  /**
   * Run fn and send what it left waiting, so that a statement failing on a record's value fails
   * here, and return that failure (plan/record-failures.ts finds the records and runs fn again).
   * Nothing was written: the views fn's statements made are dropped, since a CACHE TABLE whose
   * query failed leaves its view behind, and fn's next run makes them anew.
   */
  async attempt(fn: () => Promise<void>): Promise<unknown | undefined> {
    await this.flush();
    const from = this.made.length;
    try {
      await fn();
      await this.flush();
      return undefined;
    } catch (e) {
      this.deferred.length = 0;
      for (const view of new Set(this.made.slice(from))) await this.client.execute(`DROP VIEW IF EXISTS ${q(view)}`);
      return e;
    }
  }

  async query(sql: string, params: unknown[] = []): Promise<Row[]> {
    if (this.releasing) await this.released();
    return this.send(bindParams(sql, params), 'query');
  }

  /**
   * Send `text` after the statements that wait, as one SQL script when there are any (a script
   * answers with its last statement's rows, so a statement whose answer is not a query's rows,
   * DESCRIBE or SHOW, goes alone after them). A refused plan (plan-refusals.ts) is sent again.
   */
  private async send(text: string, as: 'execute' | 'query'): Promise<Row[]> {
    const alone = (t: string) => againOnPlanValidation((excluded) => this.excluding(excluded, () => (as === 'query' ? this.client.query(t) : this.client.execute(t))));
    if (!this.deferred.length) return alone(text);
    if (!scriptable(text)) {
      await this.flush();
      return alone(text);
    }
    const before = this.deferred.splice(0);
    try {
      return await this.client.execute(sqlScript([...before.map((d) => d.sql), text]));
    } catch (e) {
      if (!planRefusal(e)) throw e;
      // The statements before the refused one ran: the rest go one at a time, each sent again if refused.
      await this.sendEach(before);
      return alone(text);
    }
  }

  /** Send the statements that wait (one script), when there are any. */
  private async flush(): Promise<void> {
    const before = this.deferred.splice(0);
    if (!before.length) return;
    try {
      await this.client.execute(sqlScript(before.map((d) => d.sql)));
    } catch (e) {
      if (!planRefusal(e)) throw e;
      await this.sendEach(before);
    }
  }

  /**
   * After a script was refused partway: each statement whose view the session does not have yet
   * is sent alone (its view is there when a statement before the refused one made it).
   */
  private async sendEach(statements: Array<{ sql: string; makes: string }>): Promise<void> {
    const have = new Set((await this.sessionViews()) ?? []);
    for (const st of statements) {
      if (have.has(st.makes) && !/^\s*CREATE\s+OR\s+REPLACE\b/i.test(st.sql)) continue;
      await againOnPlanValidation((excluded) => this.excluding(excluded, () => this.client.execute(st.sql)));
      have.add(st.makes);
    }
  }

  /**
   * Run one statement with optimizer rules left out (plan-refusals.ts), and then put the session's
   * setting back: the rules are left out of that statement only.
   */
  private async excluding<T>(rules: readonly string[], send: () => Promise<T>): Promise<T> {
    if (!rules.length) return send();
    await this.client.execute(`SET ${EXCLUDED_RULES} = ${rules.join(',')}`);
    try {
      return await send();
    } finally {
      await this.client.execute(`RESET ${EXCLUDED_RULES}`).catch(() => undefined);
    }
  }

  /** A refused plan is sent again only while no row has reached `onRow` (it would see rows twice). */
  async streamText(sql: string, params: unknown[], onRow: (text: string) => void | Promise<void>): Promise<void> {
    const text = bindParams(sql, params);
    await this.flush();
    let delivered = false;
    const stream = async () => {
      for await (const batch of this.client.stream(text))
        for (const row of batch) {
          delivered = true;
          const v = Object.values(row)[0];
          await onRow(v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));
        }
    };
    await againOnPlanValidation(
      (excluded) => this.excluding(excluded, stream),
      () => !delivered,
    );
  }

  async columns(table: string): Promise<ColumnInfo[] | undefined> {
    let rows: Row[];
    await this.flush();
    try {
      rows = await this.client.execute(`DESCRIBE TABLE ${q(table)}`);
    } catch (e) {
      if (/TABLE_OR_VIEW_NOT_FOUND/.test(String((e as Error).message))) return undefined;
      throw e;
    }
    const out: ColumnInfo[] = [];
    // DESCRIBE lists the columns, then a blank line or `# …` sections (partitioning, details).
    // Types as Spark spells them: a struct's field names keep their case (sameType compares).
    for (const r of rows) {
      const name = String(r.col_name ?? '');
      if (name === '' || name.startsWith('#')) break;
      out.push({ name, type: String(r.data_type) });
    }
    return out;
  }

  async tables(): Promise<Array<{ name: string; view: boolean }>> {
    await this.flush();
    const views = new Set((await this.client.execute(`SHOW VIEWS IN ${this.schemaName}`)).filter((r) => r.isTemporary !== true).map((r) => String(r.viewName)));
    const rows = await this.client.execute(`SHOW TABLES IN ${this.schemaName}`);
    return rows.filter((r) => r.isTemporary !== true).map((r) => ({ name: String(r.tableName), view: views.has(String(r.tableName)) }));
  }

  async describe(select: string): Promise<ColumnInfo[]> {
    await this.flush();
    const rows = await this.client.execute(`DESCRIBE QUERY ${select}`);
    return rows.map((r) => ({ name: String(r.col_name), type: String(r.data_type) }));
  }

  /**
   * Spark's verdict on a flow expression, from one EXPLAIN EXTENDED (which runs nothing) of the
   * expression over a record of the columns' types: the parser refuses the statement, or the
   * analyzer writes its error where the analyzed plan would be; else the analyzed plan gives the
   * type, and shows what the expression reads: the probe's plan is the expression over the record
   * alone, and anything else (a subquery's plan, on lines that start with ':') or a function whose
   * value changes between runs is refused.
   */
  async checkExpression(expr: string, columns: ColumnInfo[]): Promise<ExpressionProblem | undefined> {
    const record = columns.length ? columns.map((c) => `CAST(NULL AS ${c.type}) AS ${q(c.name)}`).join(', ') : '1 AS `__scd_none`';
    let plan: string;
    await this.flush();
    try {
      const rows = await this.client.execute(`EXPLAIN EXTENDED SELECT ${spliced(expr)} AS __scd_probe FROM (SELECT ${record}) __scd_record`);
      plan = String(Object.values(rows[0] ?? {})[0] ?? '');
    } catch (e) {
      const reason = e instanceof QueryError ? e.reason : String(e);
      return /PARSE_SYNTAX_ERROR|syntax/i.test(reason) ? { kind: 'syntax', reason } : { kind: 'unbound', reason };
    }
    const analyzed = (plan.split('== Analyzed Logical Plan ==\n')[1] ?? '').split('\n== Optimized Logical Plan ==')[0]!;
    const [schema = '', top = '', ...rest] = analyzed.split('\n');
    const error = /^org\.apache\.spark\.\S*Exception: (.*)$/.exec(schema);
    if (error) return /PARSE_SYNTAX_ERROR/.test(error[1]!) ? { kind: 'syntax', reason: error[1]! } : { kind: 'unbound', reason: error[1]! };
    if (
      rest.some((l) => /^\s*:/.test(l)) ||
      /subquery#|exists#|ListQuery|\b(rand|randn|uuid|shuffle|now|current_\w+|input_file_\w+|monotonically_increasing_id|spark_partition_id|reflect|java_method|version|user|session_user)\(/i.test(
        top,
      )
    )
      return { kind: 'reads', reason: 'it reads more than the record (a subquery, a table, or a value that changes between runs)' };
    // One item, the probe: anything else in the schema line was spliced in beside it.
    const one = /^__scd_probe: ([^,]*)$/.exec(schema);
    if (!one) return { kind: 'syntax', reason: 'not one expression' };
    const type = one[1]!.trim().toUpperCase();
    return type === 'BOOLEAN' ? undefined : { kind: 'type', type };
  }

  /**
   * Spark has no multi-statement transaction: the work runs as it comes, and the target's lease
   * (lockTarget) ends with it: with the commit's record when the work succeeded and the lease was
   * taken to end so (LockRecords), or given back by a DELETE.
   *
   * The commit's label (Dialect.commitLabel) stays set on the session after the work: the writes
   * that may follow in the session are the lease's, a table source's watermark (after the commit
   * record), and the next commit's, which sets its own label before its first write of a target's
   * table (a recovery's RESTORE before it keeps the interrupted commit's label, which is the one it
   * undoes: execute/delta/recovery.ts).
   */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    let succeeded = false;
    try {
      const result = await fn();
      succeeded = true;
      return result;
    } finally {
      // The lease ends with a successful commit's record, or goes back while the commit's scratch
      // is dropped: every later statement of the session waits for that (discardScratch's drops
      // do not), and reports its failure.
      this.releasing = this.lease.end(succeeded);
      this.releasing.catch(() => undefined);
    }
  }

  /** Wait for the lease's giving back, if one is under way; its failure is thrown once. */
  private async released(): Promise<void> {
    const releasing = this.releasing;
    this.releasing = undefined;
    await releasing;
  }

  /**
   * Each table is read, for the rest of the commit, at its Delta version now: a temporary view of
   * the same name (which unqualified names find first) over `VERSION AS OF`. Spark recomputes a
   * cached view when a table it read is written; pinned, it recomputes the same rows. Writes name
   * the table with its database (which no temporary view shadows).
   */
  async pinReads(tables: string[], latest: Record<string, number> = {}): Promise<Record<string, string>> {
    const versions = await Promise.all(tables.map(async (t) => latest[t] ?? (await this.tableHistory(t, 1)).at(-1)!.version));
    const qualified = (t: string) => `${this.schemaName}.${q(t)}`;
    // Sent with the commit's next statement (run defers a view's making).
    this.scratchGone = false;
    for (const [i, t] of tables.entries()) {
      this.deferred.push({ sql: `CREATE OR REPLACE TEMP VIEW ${q(t)} AS SELECT * FROM ${qualified(t)} VERSION AS OF ${versions[i]}`, makes: t });
      this.pinned.add(t);
    }
    return Object.fromEntries(tables.map((t) => [t, qualified(t)]));
  }

  /** Delta's RESTORE: a new version of the table with the files of `version`. */
  async restoreTable(table: string, version: number): Promise<void> {
    this.lease.check();
    await this.flush();
    await this.client.execute(`RESTORE TABLE ${q(table)} TO VERSION AS OF ${version}`);
  }

  async tableHistory(table: string, latest?: number): Promise<TableVersion[]> {
    // By the schema's name: a commit's pinned reads are temporary views by the tables' names.
    const history = await this.client.execute(`DESCRIBE HISTORY ${this.schemaName}.${q(table)}${latest ? ` LIMIT ${latest}` : ''}`);
    return history
      .map((h) => {
        const restored = h.operation === 'RESTORE' ? parameter(h.operationParameters, 'version') : undefined;
        return {
          version: Number(h.version),
          label: typeof h.userMetadata === 'string' ? h.userMetadata : null,
          ...(typeof h.operation === 'string' ? { operation: h.operation } : {}),
          ...(restored !== undefined && restored !== null ? { restoredTo: Number(restored) } : {}),
        };
      })
      .sort((a, b) => a.version - b.version);
  }

  async lockTarget(target: string, waiting?: (message: string) => void, records?: LockRecords): Promise<void> {
    await this.released();
    const bound = records && { ...records, lastRecorded: bindParams(records.lastRecorded, [target]) };
    await this.lease.acquire(target, !!this.options.noWait, waiting, bound);
  }

  /**
   * The staged input is made before this returns, not with the next query: staging runs while the
   * target's lease is taken (execute/executor.ts stagesWhileLocking), so its work overlaps the lease's
   * instead of following it.
   */
  async stageFiles(files: InputFile[], table: string, rejects: string): Promise<StagedFiles> {
    const staged = await stageSparkFiles({ run: (sql) => this.run(sql), query: (sql) => this.query(sql) }, files, table, rejects);
    await this.flush();
    return staged;
  }

  listFolder(folder: string): Promise<StoredFile[]> {
    return listSparkFolder(this, folder);
  }

  hashFiles(files: string[]): Promise<Map<string, string>> {
    return hashSparkFiles(this, files);
  }

  async appendRejects(file: string, label: string, rejects: string): Promise<void> {
    const more = `${rejects}_more`;
    await this.run(`CREATE TEMP VIEW ${q(`${more}_text`)} USING json OPTIONS (path ${sparkString(literalSparkPath(file))}, primitivesAsString 'true')`);
    await this.run(
      `CACHE TABLE ${q(more)} AS SELECT * FROM ${q(rejects)} UNION ALL SELECT ${sparkString(label)} AS ${q(FILE_COLUMN)}, CAST(line AS BIGINT) AS ${q(LINE_COLUMN)}, reason, raw FROM ${q(`${more}_text`)}`,
    );
    await this.run(`DROP TABLE ${q(rejects)}`);
    await this.run(`ALTER VIEW ${q(more)} RENAME TO ${q(rejects)}`);
  }

  /**
   * Intermediate scratch is kept until the commit ends: uncaching a cached view early would
   * uncache what was computed from it too (Spark cascades), and have it recomputed.
   */
  async dropTemporary(): Promise<void> {}

  /**
   * Every temporary view of the commit goes, one at a time, **newest first** and the pinned ones
   * last: a view goes before the views it reads. Dropping a cached view that other cached views
   * read has Spark re-plan and re-cache those (its uncache does not cascade for temporary views),
   * which costs a recomputation and, with views dropped at once, fails in Spark's optimizer
   * (PLAN_VALIDATION_FAILED_RULE_IN_BATCH, PushDownPredicates). The plain views (no cache) go
   * after the cached ones: every drop has Spark's cache manager look through the plan of each cached
   * view left, and a commit's late cached plans are its largest, so a plain view dropped while they
   * are there costs a look through each of them, and after them nothing (the figures:
   * docs/decisions/0095-a-commits-scratch-goes-before-its-record-on-delta.md). Only DROP VIEW: it
   * never reaches a stored table of the same name.
   */
  async discardScratch(tables: string[], views: string[]): Promise<void> {
    if (this.scratchGone) return this.released();
    // What was never sent made nothing; a pinned name with no view would reach the table.
    const unsent = this.deferred.splice(0);
    const pinnedMade = [...this.pinned].filter((t) => !unsent.some((d) => d.makes === t));
    const newestFirst = [...new Set([...this.made].reverse())].filter((n) => !this.pinned.has(n));
    const made = [...newestFirst.filter((n) => !this.plain.has(n)), ...newestFirst.filter((n) => this.plain.has(n))];
    // The commit's other scratch names (`_scd_…`, which no stored table has) go too: IF EXISTS
    // costs nothing in a script.
    const others = [...views, ...tables].filter((n) => !made.includes(n) && !this.pinned.has(n));
    const order = [...made, ...new Set(others), ...pinnedMade];
    const drop = async () => {
      try {
        if (order.length) await this.client.execute(sqlScript(order.map((n) => `DROP VIEW IF EXISTS ${q(n)}`)));
        this.made.length = 0;
        this.plain.clear();
        this.pinned.clear();
      } catch {
        await this.discardOneByOne(tables, views, new Set(pinnedMade));
      }
      this.scratchGone = true;
    };
    await allEnded([drop(), this.released()]);
  }

  /** The views of the commit, one statement each, where the script of them failed. */
  private async discardOneByOne(tables: string[], views: string[], pinned: Set<string>): Promise<void> {
    const newestFirst = [...new Set([...this.made].reverse())];
    this.made.length = 0;
    this.plain.clear();
    this.pinned.clear();
    // The commit's other scratch names go only where the session has such a view; all of them if the list failed.
    const existing = await this.sessionViews();
    const others = [...views, ...tables, ...(existing ?? [])].filter((n) => (!existing || existing.includes(n)) && !newestFirst.includes(n) && !pinned.has(n));
    const order = [...newestFirst.filter((n) => !pinned.has(n)), ...new Set(others), ...pinned];
    const failed: string[] = [];
    for (const n of order) await this.client.execute(`DROP VIEW IF EXISTS ${q(n)}`).catch(() => failed.push(n));
    // A view that another still read: once more, now that the others are gone.
    const still: string[] = [];
    for (const n of failed) await this.client.execute(`DROP VIEW IF EXISTS ${q(n)}`).catch(() => still.push(n));
    if (still.length) throw new Error(`spark: cannot drop the commit's temporary views ${still.join(', ')}`);
  }

  /** The session's temporary views that scdkit made (staging's per-file views among them). */
  private async sessionViews(): Promise<string[] | undefined> {
    const rows = await this.client.execute(`SHOW VIEWS IN ${this.schemaName} LIKE '_scd_*'`).catch(() => undefined);
    return rows?.filter((r) => r.isTemporary === true).map((r) => String(r.viewName));
  }

  async analyzeTemporary(): Promise<void> {}

  diskFull(error: unknown): string | undefined {
    return /No space left on device/i.test(String((error as Error)?.message ?? error))
      ? "free space on the Spark server's local disks (spark.local.dir) or its warehouse"
      : undefined;
  }

  /**
   * Only Parquet output reaches here (writeRows streams NDJSON, CSV and table output through scd),
   * and Spark would write it on the server's disks, not where scd runs: refused.
   */
  async copyToFile(): Promise<void> {
    throw new ScdError('USAGE', 'Parquet output is not written from a Spark target (Spark would write the file on the server, not here)', {
      fix: 'write NDJSON or CSV instead (--out rows.ndjson or --out rows.csv), or read the Delta table with Spark',
    });
  }

  async close(): Promise<void> {
    try {
      await this.released().catch(() => undefined);
      await this.lease.release().catch(() => undefined);
      if (this.options.dropSchemaOnClose) await this.client.execute(`DROP DATABASE IF EXISTS ${this.schemaName} CASCADE`).catch(() => undefined);
    } finally {
      await this.client.close();
    }
  }
}

/**
 * A flow's schema as Spark SQL names it: one quoted name, or for `catalog.schema` (Unity Catalog;
 * the flow's schema allows one dot) the catalog's and the schema's. `USE catalog.schema` sets both.
 */
export function sparkSchemaName(schema: string): string {
  return quoteDotted(sparkDialect, schema);
}

/** A value of DESCRIBE HISTORY's operationParameters (a map, read as key/value entries). */
function parameter(parameters: unknown, key: string): unknown {
  if (Array.isArray(parameters)) return parameters.find((e) => e && e.key === key)?.value;
  if (parameters && typeof parameters === 'object') return (parameters as Record<string, unknown>)[key];
  return undefined;
}

/** The temporary view a statement makes (CACHE TABLE, CREATE [OR REPLACE] TEMP VIEW, ALTER VIEW … RENAME TO), if it makes one. */
export function viewMadeBy(sql: string): string | undefined {
  const m =
    /^\s*(?:CACHE\s+(?:LAZY\s+)?TABLE|CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+VIEW)\s+(`(?:[^`]|``)+`|\w+)/i.exec(sql) ??
    /^\s*ALTER\s+VIEW\s+\S+\s+RENAME\s+TO\s+(`(?:[^`]|``)+`|\w+)/i.exec(sql);
  if (!m) return undefined;
  const n = m[1]!;
  return n.startsWith('`') ? n.slice(1, -1).replace(/``/g, '`') : n;
}
