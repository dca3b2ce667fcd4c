import { ScdError } from '../errors.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { FILE_COLUMN, hasRow, LINE_COLUMN } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { ensureCatalog, readTargetRecords, writeFlowRecord } from '../store/catalog.js';
import { recordCommit, type CommitResult } from '../store/commits.js';
import { storeNames, TMP, type StoreNames } from '../store/names.js';
import { settleDebezium } from '../flow/debezium-positions.js';
import { DIFF_VIEWS, diffSql, WALKED, wholeDiffSql } from './diff-sql.js';
import { ensureFeedColumns, FEED_OWN_COLUMNS } from '../store/feed.js';
import { evolveModel } from './evolve.js';
import { appendEventsSql, batchSql, DROP, expectationColumn, expectationReason, logColumns, quarantineSql, REASON } from './events-sql.js';
import { sqlString, type Dialect } from '../dialects/dialect.js';
import { eventsSql, freshSql, knownSql, LOG_VIEW, keysSql, prevSql, rebuiltStateSql, SIMPLE, SLOW, slowLogSql, stateChange, tiesSql, validSql } from './incremental.js';
import { checkExpressions, checkSpelling, shown } from './expression.js';
import type { StagedColumn } from '../typing/cast.js';
import type { LexicalColumns } from '../typing/lexical.js';
import { sourceColumnsOf, typeStagedColumns } from '../typing/staged-types.js';
import { deriveModel, INTERNAL_PREFIX, type ColumnModel } from './model.js';
import { changedSettings, semanticSettings } from './settings.js';
import { executorFor } from '../execute/executor.js';
import { checkEndSentinel, COMMIT, createStoreSql, OP, OP_TRUNCATE, targetColumns } from './target.js';
import { checkColumnNames, checkNewTarget } from './name-clashes.js';
import { reportDiskFull } from './disk-full.js';
import { canMarkTies, TIE, walkSql } from './walk-sql.js';

export type ApplyResult = CommitResult;

export type Progress = (message: string) => void;

/**
 * From this many staged records a commit frees its intermediate tables as soon as they are used
 * (and turns its batch into the valid events by a rename): below it, that would cost more
 * statements than the memory it gives back is worth (docs/DECISIONS.md "A commit's statements").
 */
const LARGE_COMMIT = 100_000;

/**
 * From this many valid events a commit has the engine analyze its valid events and its keys
 * (Driver.analyzeTemporary; PostgreSQL, which never analyzes a temporary table by itself). Below
 * it the two statements are saved: onto a 1M-row target (PostgreSQL 15), the key list took as
 * long unanalyzed up to about 2,000 events, and about twice as long or more from 3,000 (50–195 ms
 * against 20–55 at 3,000–5,000; docs/PERFORMANCE.md "Session 13").
 */
const ANALYZED_FROM = 2_000;

/** How a commit's records get into TMP.stage / TMP.rejects, and what else it must do. */
export interface CommitSpec {
  /** What the commit read, for the log. */
  inputs: string[];
  /**
   * Fill TMP.stage and TMP.rejects (runs before the transaction: it only writes temporary tables).
   * `lexical`: the staged columns scdkit types (typing/); `records`: the records read, counted by
   * the reader, which the commit checks its own counts against.
   */
  stage(driver: Driver): Promise<{ skipped: number; lexical?: LexicalColumns; records?: number; columns?: ColumnInfo[] }>;
  /**
   * Inside the transaction, once the model is known: adjust TMP.stage (snapshots add implied
   * deletes and drop unchanged rows). Returns rows added and rows removed.
   */
  prepare?(driver: Driver, model: ColumnModel, names: StoreNames, existed: boolean, stagedAs: ReadonlyMap<string, StagedColumn>): Promise<{ implied: number; unchanged: number }>;
  /**
   * Inside the transaction, right after the target's lock: check that the inputs are still to be
   * applied (landing files: not recorded by a commit that ran while this one waited); throws to
   * roll back.
   */
  claim?(driver: Driver): Promise<void>;
  /** Inside the transaction, after the target is written and before the commit is recorded (landing file records). */
  finish?(driver: Driver, version: number): Promise<void>;
  /**
   * Inside the transaction, right after the commit is recorded: a write that an engine without
   * transactions may lose to a crash without losing an event (a table source's watermark: left
   * behind, the rows above it are read again, and the ones applied count as duplicates). Written
   * before the record, a crash would leave it ahead of a commit that recovery undoes.
   */
  afterRecord?(driver: Driver, version: number): Promise<void>;
  /**
   * Where each record orders its own keys (JSON): the keys of the first of the given records (each
   * file's first applied one; the earliest file first), in the order written, or undefined where
   * the source has one order for every record.
   */
  recordKeys?(driver: Driver, firsts: Array<{ file: string; line: number }>): Promise<string[] | undefined>;
  progress?: Progress;
}

/**
 * One atomic commit: stage, map to events, log new ones, recompute affected keys, write the diff.
 * A full disk undoes it whole, and says so in one line (disk-full.ts).
 */
export async function applyCommit(driver: Driver, flow: Flow, spec: CommitSpec): Promise<ApplyResult> {
  return reportDiskFull(driver, flow, 'apply', () => commit(driver, flow, spec));
}

async function commit(driver: Driver, flow: Flow, spec: CommitSpec): Promise<ApplyResult> {
  const started = Date.now();
  checkSpelling(flow);
  await ensureCatalog(driver, storeNames(flow.target));
  return withScratch(driver, () => stageAndCommit(driver, flow, spec, started));
}

/**
 * Staging only writes temporary tables; it runs before the transaction because a reader that
 * refuses a file must not abort it (the driver then finds the bad lines another way).
 */

async function stageAndCommit(driver: Driver, flow: Flow, spec: CommitSpec, started: number): Promise<ApplyResult> {
  const progress = spec.progress ?? (() => {});
  let names = storeNames(flow.target);
  const d = driver.dialect;
  const q = d.quote;
  const executor = executorFor(d);
  const num = async (sql: string, params: unknown[] = []) => Number(Object.values((await driver.query(sql, params))[0] ?? {})[0] ?? 0);
  progress(`reading ${spec.inputs.length === 1 ? spec.inputs[0] : `${spec.inputs.length} inputs`}`);
  const { skipped, lexical = new Map(), records, columns: stagedColumns } = await spec.stage(driver);
  // A batch of few records, none of which can reach every key (a truncate, a snapshot's implied
  // deletes): its commit's results are small too (Driver.transaction's `small`).
  const small = records !== undefined && records < LARGE_COMMIT && !spec.prepare && flow.applyAsTruncates === undefined;
  return driver.transaction(async () => {
    await driver.lockTarget(flow.target, progress);
    await spec.claim?.(driver);
    const stagedTable = stagedColumns ?? (await driver.columns(TMP.stage)) ?? [];
    // The flow record, this commit's number, whether an earlier commit counted ties, and what was staged.
    // Where scdkit writes the change feed, also which of its own columns the feed has (writeDiff).
    const feedColumns = d.capabilities.changeFeed ? undefined : { table: names.changes, among: FEED_OWN_COLUMNS };
    const { record, version, hadTies, rows: read, found } = await readTargetRecords(driver, names, { staged: TMP.stage, rejected: TMP.rejects }, feedColumns);
    let stagedRows = read.staged;
    const rejected = read.rejected;
    if (records !== undefined && records !== stagedRows + rejected)
      throw new ScdError('NOT_APPLIED', `the reader counted ${records} records but staged ${stagedRows} and rejected ${rejected}; nothing was applied`, {
        file: flow.origin,
        fix: 'this is a bug in scdkit: please report it with the input file',
      });

    // What the engine needs before a commit writes (without transactions: an interrupted commit's
    // writes undone, this one's labelled with its number; store/recovery.ts).
    await executor.begin(driver, names, version, !!record);
    // A Debezium flow's sequence follows from its target's source columns: the stored ones once it exists.
    flow = settleDebezium(flow, (record?.model.source ?? sourceColumnsOf(stagedTable)).map((c) => c.name));
    const settings = semanticSettings(flow);
    const at = new Date().toISOString();
    let model: ColumnModel;
    // The types the staged values are read as: declared, stored, or what the good values say.
    const typing = stagedRows > 0 ? await typeStagedColumns(driver, flow, TMP.stage, stagedTable, lexical, record?.model.source) : undefined;
    const staged = typing ? [...typing.columns, ...internalColumns(stagedTable)] : stagedTable;
    const stagedAs = typing?.staged ?? new Map();
    if (!record) {
      if (stagedRows === 0)
        throw new ScdError('NOT_APPLIED', 'the input has no readable rows, so the target cannot be created yet', {
          file: flow.origin,
          fix: 'apply a file with at least one valid record',
        });
      model = deriveModel(flow, staged);
    } else {
      const changed = changedSettings(record.settings, settings);
      if (changed.length)
        throw new ScdError('FLOW_INVALID', `the flow changed (${changed.join(', ')}) since the target was built, and this needs a rebuild`, {
          file: flow.origin,
          field: changed[0],
          fix: 'restore the previous setting, or run `scd rebuild` on the flow to recompute all history under it',
        });
      model = stagedRows > 0 ? await evolveModel(driver, flow, record, staged, stagedAs, names, at) : record.model;
    }
    // Before any statement holds a flow expression (also for an empty input: the batch holds them).
    await checkExpressions(driver, flow, model.source);
    // Names and values the engine would refuse halfway: refused before anything is created.
    checkColumnNames(flow, model, d);
    await checkEndSentinel(driver, flow, model);
    const createTarget = async () => {
      await executor.beforeCreate(driver, names, version);
      await checkNewTarget(driver, flow, names);
      for (const sql of createStoreSql(flow, model, d, names)) await driver.run(sql);
      await writeFlowRecord(driver, names, { model, settings }, at);
    };
    // The target's tables as the rest of the commit reads and writes them (a snapshot's
    // comparison with the live rows too): as of now where scratch may be recomputed (Spark).
    const pinReads = async () => {
      names = await executor.pinReads(driver, names);
    };
    // A new target whose records each order their own keys (JSON) takes its columns' order from
    // its first applied record, so it is created once the batch tells which that is.
    const orderLater = !record && !spec.prepare && !!spec.recordKeys;
    if (!record && !orderLater) await createTarget();
    if (!orderLater) await pinReads();
    let unchanged = 0;
    if (spec.prepare) {
      const p = await spec.prepare(driver, model, names, !!record, stagedAs);
      stagedRows += p.implied - p.unchanged;
      unchanged = p.unchanged;
    }
    const rowsRead = stagedRows + rejected + unchanged + skipped;

    progress(`mapping ${stagedRows} records to events`);
    // An empty input has no columns worth reading: every model column is then null.
    const stagedNow =
      stagedRows > 0 || spec.prepare
        ? stagedColumnsNow(spec.prepare ? await driver.columns(TMP.stage) : stagedTable, stagedAs)
        : new Map<string, StagedColumn>();
    const compactedBefore = record?.compactedBefore;
    await driver.run(batchSql(flow, model, d, stagedNow, compactedBefore), compactedBefore === undefined ? [] : [compactedBefore]);
    if (orderLater) {
      const ordered = await orderByFirstApplied(driver, spec, staged);
      if (ordered) {
        model = deriveModel(flow, ordered);
        await dropTables(driver, [TMP.batch]);
        await driver.run(batchSql(flow, model, d, stagedNow));
      }
      await createTarget();
      await pinReads();
    }
    const expectations = await countExpectations(driver, flow);
    // Freeing memory early changes scratch tables in place (temporaryTables).
    const large = stagedRows >= LARGE_COMMIT && d.capabilities.temporaryTables;
    // The valid events, each once: a large batch finds its repeats first (a narrow aggregate) and
    // deduplicates only those; a small one deduplicates every row at once.
    const { dups, valid, distinct } = validSql(model, d);
    await driver.run(large ? dups : distinct);
    // Each record has one fate, counted from the batch: quarantined, dropped, or a valid event.
    const fates = (await driver.query(
      `SELECT count(*) AS total, count(*) FILTER (WHERE ${q(REASON)} IS NOT NULL) AS quarantined,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND ${q(DROP)}) AS dropped, count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)}) AS ok,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)} AND ${q(OP)} = ${OP_TRUNCATE}) AS truncates,
         (SELECT count(*) FROM ${q(large ? TMP.dups : TMP.valid)}) AS made
       FROM ${q(TMP.batch)}`,
    ))[0]!;
    if (Number(fates.quarantined) > 0) await driver.run(quarantineSql(d, names, stagedTable), [version]);
    if (rejected > 0)
      await driver.run(
        `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw) SELECT CAST($1 AS ${d.types.int}), ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, reason, raw FROM ${q(TMP.rejects)}`,
        [version],
      );
    // The staged rows are mapped (and the unfit ones quarantined with their raw text): free them.
    if (large) await dropTables(driver, [TMP.stage, TMP.rejects], [], { madeBefore: true });
    const quarantined = rejected + Number(fates.quarantined);
    const dropped = Number(fates.dropped);
    const okRecords = Number(fates.ok);
    if (Number(fates.total) !== stagedRows || Number(fates.total) !== Number(fates.quarantined) + dropped + okRecords)
      throw new ScdError('NOT_APPLIED', `${stagedRows} records were staged but ${fates.total} mapped (${fates.quarantined} quarantined, ${dropped} dropped, ${okRecords} valid); nothing was applied`, {
        file: flow.origin,
        fix: 'this is a bug in scdkit: please report it with the input file',
      });
    let validCount = Number(fates.made);
    if (large) {
      const batchIsValid = quarantined === rejected && dropped === 0 && Number(fates.made) === 0;
      if (batchIsValid) {
        // Every record is a valid event, once: the batch becomes the valid events by a rename, its
        // other columns dropped (which frees them, as the copy would).
        const keep = new Set(logColumns(model));
        const extra = ((await driver.columns(TMP.batch)) ?? []).filter((c) => !keep.has(c.name));
        for (const c of extra) await driver.run(`ALTER TABLE ${q(TMP.batch)} DROP COLUMN ${q(c.name)}`);
        await driver.run(`ALTER TABLE ${q(TMP.batch)} RENAME TO ${q(TMP.valid)}`);
      } else await driver.run(valid);
      // Intermediate tables go as soon as they are used (a large commit keeps to its memory).
      await dropTables(driver, [TMP.batch, TMP.dups]);
      // Valid events: the valid records less the batch's repeats (each set of equal ones stays once).
      validCount = batchIsValid ? okRecords : await num(`SELECT count(*) FROM ${q(TMP.valid)}`);
    }
    const validEvents = { n: validCount, truncates: Number(fates.truncates) };
    const truncated = Number(validEvents.truncates) > 0;
    // Where the engine needs telling (PostgreSQL), the planner learns the size of the valid events
    // and of the keys, which pick the rows of the key state, the log and the target that the
    // commit reads; below ANALYZED_FROM events its estimate from their pages serves.
    const analyzed = validCount >= ANALYZED_FROM;
    if (analyzed) await driver.analyzeTemporary(TMP.valid, model.keys.map((k) => k.name));
    await driver.run(keysSql(flow, model, d, names, truncated));
    if (analyzed) await driver.analyzeTemporary(TMP.keys);
    const keyCounts = (await driver.query(
      `SELECT count(*) AS keys, count(*) FILTER (WHERE ${q(SLOW)}) AS slow, count(*) FILTER (WHERE NOT ${q(SIMPLE)}) AS walked FROM ${q(TMP.keys)}`,
    ))[0]!;
    // The log's events of the slow keys, read once (the walk and the deduplication read them);
    // a batch of simple keys reads nothing of the log.
    const inPlace = d.capabilities.temporaryTables;
    // Only a walked (not simple) key's events, or a truncate, can tie.
    const mayTie = truncated || Number(keyCounts.walked) > 0;
    // Where scratch cannot change in place (Spark), a batch with slow keys makes its new events
    // anew and counts them, their ties and the keys with news in one query (madeAnew).
    const madeAnew = !inPlace && !truncated && Number(keyCounts.slow) > 0 ? { ties: 0, keys: 0 } : undefined;
    let logged = 0;
    if (truncated || Number(keyCounts.walked) > 0) {
      await driver.run(slowLogSql(model, d, names));
      if (Number(keyCounts.slow) > 0 && !madeAnew) logged = await num(`SELECT count(*) FROM ${q(TMP.slowLog)}`);
    }
    // Without truncates the valid events are new but those of slow keys the log holds already
    // (a fast key's events all come after what was applied): those go, and the valid events
    // become the new ones by a rename, not a copy.
    // Where scratch cannot change in place, the new events are made anew from the valid ones.
    if (truncated || madeAnew) await driver.run(freshSql(model, d, names, flow.applyAsTruncates !== undefined));
    else {
      if (logged > 0) await driver.run(knownSql(model, d));
      await driver.run(d.renameScratch(TMP.valid, TMP.fresh));
    }
    if (madeAnew) {
      const row = (await driver.query(
        `SELECT (SELECT count(*) FROM ${q(TMP.fresh)}) AS applied, ${mayTie ? `(${tiesSql(model, d, names, flow.applyAsTruncates !== undefined)})` : '0'} AS ties, (${keysWithNewsSql(d, model)}) AS keys`,
      ))[0]!;
      logged = Number(row.applied);
      madeAnew.ties = Number(row.ties);
      madeAnew.keys = Number(row.keys);
    }
    const eventsApplied = madeAnew ? logged : truncated || logged > 0 ? await num(`SELECT count(*) FROM ${q(TMP.fresh)}`) : validEvents.n;
    if (truncated && large) await dropTables(driver, [TMP.valid]);
    // Duplicates, counted: records equal to another of the batch, events the log already holds,
    // and a snapshot's unchanged rows.
    const duplicates = okRecords - Number(validEvents.n) + (Number(validEvents.n) - eventsApplied) + unchanged;
    if (rowsRead !== eventsApplied + duplicates + quarantined + dropped + skipped)
      throw new ScdError('NOT_APPLIED', `${rowsRead} records read but ${eventsApplied} applied + ${duplicates} duplicates + ${quarantined} quarantined + ${dropped} dropped + ${skipped} skipped; nothing was applied`, {
        file: flow.origin,
        fix: 'this is a bug in scdkit: please report it with the input file',
      });
    if (eventsApplied > 0) await driver.run(appendEventsSql(model, d, names), [version]);
    const ties = madeAnew ? madeAnew.ties : eventsApplied && mayTie ? await num(tiesSql(model, d, names, flow.applyAsTruncates !== undefined)) : 0;
    // Only a slow key can have no new event (a fast key's events are all new).
    // (Where scratch cannot change in place, they are only counted, and recomputed to no change.)
    const keysAffected = madeAnew ? madeAnew.keys : !truncated && Number(keyCounts.slow) > 0 ? await dropKeysWithoutNews(driver, model) : Number(keyCounts.keys);

    let counts = NO_CHANGES;
    if (keysAffected > 0) {
      progress(`recomputing the history of ${keysAffected} key${keysAffected === 1 ? '' : 's'}`);
      counts = await recompute(driver, flow, model, names, version, at, {
        mayTie: ties > 0 || hadTies,
        byStateRow: !truncated && !!d.fetchByRowId,
        freeEarly: large,
        walkedKeys: Number(keyCounts.walked) > 0,
        simpleKeys: Number(keyCounts.walked) < Number(keyCounts.keys),
        // A new target's feed was not there when they were read.
        feedHas: record ? found : undefined,
      });
    }
    const result: ApplyResult = {
      version,
      operation: 'apply',
      committedAt: at,
      inputs: spec.inputs,
      rowsRead,
      eventsApplied,
      duplicates,
      ties,
      quarantined,
      dropped,
      skipped,
      expectations,
      keysAffected,
      rowsInserted: counts.inserted,
      rowsUpdated: counts.updated,
      rowsDeleted: counts.deleted,
      versionsClosed: counts.closed,
      durationMs: Date.now() - started,
    };
    // The commit record is the last write of the commit proper (store/recovery.ts: a commit is
    // done when it is there); only a write whose loss loses no event comes after it.
    await spec.finish?.(driver, version);
    await recordCommit(driver, names, result);
    await spec.afterRecord?.(driver, version);
    return result;
  }, { small });
}

/** scdkit's own columns of a staged table (file, line, raw text). */
function internalColumns(staged: ColumnInfo[]): ColumnInfo[] {
  const source = new Set(sourceColumnsOf(staged).map((c) => c.name));
  return staged.filter((c) => !source.has(c.name));
}

/** How each source column of the staged table is held now (a snapshot's prepare may add columns). */
function stagedColumnsNow(columns: ColumnInfo[] | undefined, known: Map<string, StagedColumn>): Map<string, StagedColumn> {
  const out = new Map<string, StagedColumn>();
  for (const c of sourceColumnsOf(columns ?? [])) out.set(c.name, known.get(c.name) ?? { type: c.type });
  return out;
}

/** A query of how many keys of TMP.keys have a new event (a slow key may have none). */
function keysWithNewsSql(d: Dialect, model: ColumnModel): string {
  const q = d.quote;
  // An outer alias no column may have (incremental.ts freshSql).
  const k = q(`${INTERNAL_PREFIX}k`);
  const on = model.keys.map((c) => `n.${q(c.name)} = ${k}.${q(c.name)}`).join(' AND ');
  return `SELECT count(*) AS n FROM ${q(TMP.keys)} ${k} WHERE NOT ${k}.${q(SLOW)} OR EXISTS (SELECT 1 FROM ${q(TMP.fresh)} n WHERE ${on})`;
}

/** Keys whose every event of this batch was a duplicate change nothing: forget them. Returns the keys left. */
async function dropKeysWithoutNews(driver: Driver, model: ColumnModel): Promise<number> {
  const q = driver.dialect.quote;
  const on = (a: string) => model.keys.map((k) => `n.${q(k.name)} = ${a}.${q(k.name)}`).join(' AND ');
  // Only a slow key can have no new event (a fast key's events are all new).
  await driver.run(`DELETE FROM ${q(TMP.keys)} WHERE ${q(SLOW)} AND NOT EXISTS (SELECT 1 FROM ${q(TMP.fresh)} n WHERE ${on(q(TMP.keys))})`);
  await driver.run(`DELETE FROM ${q(TMP.slowLog)} WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.keys)} n WHERE ${on(q(TMP.slowLog))})`);
  return Number((await driver.query(`SELECT count(*) AS n FROM ${q(TMP.keys)}`))[0]!.n);
}

export interface RecomputeOptions {
  /** Every key from the whole log (a rebuild): the walk reads the log, and the key state is rebuilt. */
  wholeLog?: boolean;
  /** Ties are likely (this commit or an earlier one counted some): walkInto groups before it walks. */
  mayTie?: boolean;
  /** TMP.keys carries each known key's row of the key state (keysSql, where the dialect fetches by row id). */
  byStateRow?: boolean;
  /** Drop the diff's intermediate tables as soon as it is written (a large commit's memory). */
  freeEarly?: boolean;
  /** Some key of TMP.keys is not simple (it is walked); when none is, the walk does not run. */
  walkedKeys?: boolean;
  /** Some key of TMP.keys is simple; undefined: look. */
  simpleKeys?: boolean;
  /** Which of FEED_OWN_COLUMNS the change feed has, read in this transaction; undefined: look. */
  feedHas?: ReadonlySet<string>;
}

/**
 * Recompute the keys of TMP.keys (slow: from the log; fast: from their live version) and write
 * what changed: target rows, change feed, key state. Returns the change counts.
 */
export async function recompute(driver: Driver, flow: Flow, model: ColumnModel, names: StoreNames, version: number, at: string, options: RecomputeOptions = {}) {
  const { wholeLog = false, mayTie = true, byStateRow = false, freeEarly = true } = options;
  const walked = wholeLog || options.walkedKeys !== false;
  const d = driver.dialect;
  const q = d.quote;
  const columns = targetColumns(flow, model, d).map((c) => c.name);
  const events = wholeLog ? LOG_VIEW : TMP.events;
  if (walked) {
    if (!wholeLog) await driver.run(prevSql(flow, model, d, names, columns));
    await driver.run(eventsSql(flow, model, d, names, !wholeLog, wholeLog));
    await walkInto(driver, flow, model, events, mayTie);
    // Every key recomputed: the rows that come out as they were are paired off first (narrowly).
    if (wholeLog) for (const sql of wholeDiffSql(flow, model, d, names)) await driver.run(sql);
  }
  // Simple keys are written by their own statements (none in a rebuild or a batch of late events).
  const simpleKeys = wholeLog ? false : options.simpleKeys ?? (await hasRow(driver, q(TMP.keys), q(SIMPLE)));
  // The key state before the target: the target's write is the last of a commit's changes (where
  // each write is a commit of its own, store/recovery.ts). Neither reads what the other writes.
  // Only a rebuild recomputes the whole log, and it has just recreated the state empty.
  // A batch with a truncate recomputes every key (keysSql's allSlow), without their rows of the state.
  const stateWrites = wholeLog ? rebuiltStateSql(flow, model, d, names) : executorFor(d).stateWrites(d, stateChange(model, d, names, { events, byRow: byStateRow, walked }));
  for (const sql of stateWrites) await driver.run(sql);
  return writeDiff(driver, flow, model, names, version, at, { next: wholeLog ? TMP.changed : TMP.next, freeEarly, walkedKeys: walked, simpleKeys, feedHas: options.feedHas });
}

/**
 * The walk of `events` into TMP.next, ordered without the payloads unless two events of a key share
 * sequence and operation (a tie). Unless ties are likely (`mayTie`: this commit or an earlier one
 * counted some), the walk finds its ties itself where it can (walk-sql.ts TIE: one more lag in its
 * sort), and only a walk that found one runs again in the full order; that spares a grouping of
 * every event by key, sequence and operation (3.1 s of a 10M rebuild). Where ties are likely, or
 * the walk cannot mark them, one walk in the full order, which groups the events to find the tied
 * ones (walk-sql.ts withTieOrder).
 */
export async function walkInto(driver: Driver, flow: Flow, model: ColumnModel, events: string, mayTie: boolean): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  // Marking ties drops the mark's column in place after (temporaryTables).
  if (mayTie || !canMarkTies(flow) || !d.capabilities.temporaryTables) {
    for (const sql of walkSql(flow, model, d, events, TMP.next)) await driver.run(sql);
    return;
  }
  for (const sql of walkSql(flow, model, d, events, TMP.next, true, true)) await driver.run(sql);
  if (!(await hasRow(driver, q(TMP.next), q(TIE)))) {
    await driver.run(`ALTER TABLE ${q(TMP.next)} DROP COLUMN ${q(TIE)}`);
    return;
  }
  await driver.run(`DROP TABLE ${q(TMP.next)}`);
  for (const sql of walkSql(flow, model, d, events, TMP.next, false)) await driver.run(sql);
}

/**
 * The staged columns in the order of the new target's first applied record (its keys as written,
 * then any other column in the order first seen), or undefined when that is their order already:
 * a quarantined or dropped record read before it never decides the order (docs/DECISIONS.md
 * "A new target's column order"), which also orders ties (their canonical text).
 */
async function orderByFirstApplied(driver: Driver, spec: CommitSpec, staged: ColumnInfo[]): Promise<ColumnInfo[] | undefined> {
  const q = driver.dialect.quote;
  const rows = await driver.query(
    `SELECT ${q(FILE_COLUMN)} AS file, min(${q(LINE_COLUMN)}) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)}) AS line,
       count(*) FILTER (WHERE ${q(REASON)} IS NOT NULL OR ${q(DROP)}) AS left_out
     FROM ${q(TMP.batch)} GROUP BY ${q(FILE_COLUMN)}`,
  );
  if (!rows.some((r) => Number(r.left_out) > 0)) return undefined;
  const firsts = rows.filter((r) => r.line !== null && r.line !== undefined).map((r) => ({ file: String(r.file), line: Number(r.line) }));
  const keys = firsts.length ? await spec.recordKeys!(driver, firsts) : undefined;
  if (!keys) return undefined;
  const place = new Map(keys.map((k, i) => [k, i]));
  const source = sourceColumnsOf(staged);
  const ordered = source
    .map((c, i) => ({ c, rank: place.get(c.name) ?? keys.length + i }))
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.c);
  if (ordered.every((c, i) => c === source[i])) return undefined;
  return [...ordered, ...internalColumns(staged)];
}

/**
 * Failed records per expectation; a failed "fail" expectation refuses the commit. Expectations
 * judge records that are events: one quarantined for what it is (a null key, an unfit value) is
 * not also a failed expectation, so each record has one fate, counted once. A record that fails
 * several expectations counts in each, as Databricks counts them.
 */
async function countExpectations(driver: Driver, flow: Flow): Promise<Record<string, number>> {
  const list = Object.entries(flow.expect);
  if (!list.length) return {};
  const q = driver.dialect.quote;
  const judged = `(${q(REASON)} IS NULL OR ${q(REASON)} IN (${list.map(([name]) => sqlString(expectationReason(name))).join(', ')}))`;
  const row = (await driver.query(
    `SELECT ${list.map((_, i) => `CAST(sum(CASE WHEN ${q(expectationColumn(i))} OR NOT ${judged} THEN 0 ELSE 1 END) AS INTEGER) AS ${q(`x${i}`)}`).join(', ')} FROM ${q(TMP.batch)}`,
  ))[0]!;
  const out: Record<string, number> = {};
  for (const [i, [name, e]] of list.entries()) {
    const failed = Number(row[`x${i}`] ?? 0);
    out[name] = failed;
    if (e.action === 'fail' && failed > 0) {
      const first = (await driver.query(
        `SELECT ${q(FILE_COLUMN)} AS f, CAST(${q(LINE_COLUMN)} AS INTEGER) AS l FROM ${q(TMP.batch)} WHERE NOT ${q(expectationColumn(i))} ORDER BY 1, 2 LIMIT 1`,
      ))[0]!;
      throw new ScdError('NOT_APPLIED', `expectation "${name}" (${shown(e.sql).slice(1, -1)}) failed on ${failed} record${failed === 1 ? '' : 's'}, first at ${first.f}:${first.l}; nothing was applied`, {
        file: flow.origin,
        field: `expect.${name}`,
        fix: 'correct those records, or change the action to warn, drop or quarantine',
      });
    }
  }
  return out;
}

export const NO_CHANGES = { inserted: 0, updated: 0, deleted: 0, closed: 0 };

export interface WriteDiffOptions {
  /** The walked keys' recomputed rows. */
  next?: string;
  /** Drop the diff's intermediate tables once written. */
  freeEarly?: boolean;
  /** Some keys were walked (`next` and TMP.prev exist). */
  walkedKeys: boolean;
  /** Some keys are simple. */
  simpleKeys: boolean;
  /** Which of FEED_OWN_COLUMNS the change feed has, read in this transaction; undefined: look. */
  feedHas?: ReadonlySet<string>;
}

/** Write the difference between the recomputed rows and the stored rows of TMP.keys; return its counts. */
export async function writeDiff(driver: Driver, flow: Flow, model: ColumnModel, names: StoreNames, version: number, at: string, options: WriteDiffOptions) {
  const { next = TMP.next, freeEarly = true, walkedKeys, simpleKeys, feedHas } = options;
  const d = driver.dialect;
  const q = d.quote;
  // Where the engine keeps the target's changes itself (Delta), scdkit writes no feed.
  const ownFeed = !d.capabilities.changeFeed;
  if (ownFeed) await ensureFeedColumns(driver, flow, names, targetColumns(flow, model, d), feedHas);
  const stored = walkedKeys && (await hasRow(driver, q(TMP.prev)));
  const diff = diffSql(flow, model, d, names, { simpleKeys, walkedKeys, next, stored });
  for (const sql of diff.prepare) await driver.run(sql);
  const row = (await driver.query(diff.counts))[0]!;
  const [added, closes, removed] = [Number(row.added), Number(row.closes), Number(row.removed)];
  if (ownFeed && added + removed > 0) await driver.run(diff.feed, [version, at]);
  for (const sql of executorFor(d).targetWrites(d, diff.change, { added, closes, removed })) await driver.run(sql);
  // What only the diff read goes now (the key state reads the walk's input and the new events).
  if (freeEarly) await dropTables(driver, [TMP.simple, TMP.prev, ...Object.values(WALKED)], DIFF_VIEWS);
  return { inserted: Number(row.inserted), updated: Number(row.updated), deleted: Number(row.deleted), closed: Number(row.closed) };
}

/**
 * Run a commit's work, then discard its scratch tables and views, also when it fails (a commit's
 * scratch never outlives it, so none is there when the next begins).
 */
export async function withScratch<T>(driver: Driver, work: () => Promise<T>): Promise<T> {
  const views: string[] = [LOG_VIEW, ...DIFF_VIEWS];
  const tables = [...Object.values(TMP).filter((t) => !views.includes(t)), ...Object.values(WALKED)];
  let out: T;
  try {
    out = await work();
  } catch (e) {
    // The commit's own error is the one to report.
    await driver.discardScratch(tables, views).catch(() => undefined);
    throw e;
  }
  await driver.discardScratch(tables, views);
  return out;
}

async function dropTables(driver: Driver, tables: string[], views: string[] = [], options: { madeBefore?: boolean } = {}): Promise<void> {
  await driver.dropTemporary(tables, views, options);
}
