import { allEnded } from '../dialects/all-ended.js';
import type { Dialect } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import { settleDebezium } from '../flow/debezium-positions.js';
import type { Flow } from '../flow/flow.js';
import { ensureCatalog, readFlowRecord, readTargetRecords, writeFlowRecord } from '../store/catalog.js';
import { type CommitResult, lockRecords, recordCommit, TIED_KEYS_LISTED } from '../store/commits.js';
import { FEED_OWN_COLUMNS } from '../store/feed.js';
import { type StoreNames, storeNames, TMP } from '../store/names.js';
import { COMMIT, OP, OP_TRUNCATE } from '../store/target-columns.js';
import type { StagedColumn } from '../typing/cast.js';
import type { LexicalColumns } from '../typing/lexical.js';
import { sourceColumnsOf, stagingColumnsOf, typeStagedColumns } from '../typing/staged-types.js';
import { reportDiskFull } from './disk-full.js';
import { appendEventsSql, DROP, logColumns, quarantineSql, REASON } from './events-sql.js';
import { evolveModel } from './evolve.js';
import { countExpectations } from './expectations.js';
import { checkExpressions, checkSpelling } from './expression.js';
import { orderByFirstApplied, type RecordKeys } from './first-applied-order.js';
import { keysSql, SIMPLE, SLOW } from './keys-sql.js';
import { lockTargetWaited } from './lock-wait.js';
import { type ColumnModel, deriveModel } from './model.js';
import { checkColumnNames, checkNewTarget } from './name-clashes.js';
import { checkFlowNames } from './name-limits.js';
import { freshSql, knownSql, slowLogSql, tiedKeysSql, tiesSql, validSql } from './new-events-sql.js';
import { type ChangeCounts, NO_CHANGES, recompute } from './recompute.js';
import { mapBatch } from './record-failures.js';
import { discardCommitScratch, withScratch } from './scratch.js';
import { changedSettings, rebuildNeeded, semanticSettings } from './settings.js';
import { checkEndSentinel, checkInclusiveEnd, createStoreSql, currentViewSql } from './target.js';

export type ApplyResult = CommitResult;

export type Progress = (message: string) => void;

/**
 * From this many staged records a commit frees its intermediate tables as soon as they are used
 * (and turns its batch into the valid events by a rename): below it, that would cost more
 * statements than the memory it gives back is worth (docs/decisions/0056-scratch-is-freed-early-only-when-large.md).
 */
const LARGE_COMMIT = 100_000;

/**
 * From this many valid events a commit has the engine analyze its valid events and its keys
 * (Driver.analyzeTemporary; PostgreSQL, which never analyzes a temporary table by itself). Below
 * it the two statements are saved: up to about this many events an unanalyzed key list is as
 * fast, and above it slower (the measurements: docs/decisions/0060-postgresql-analyzes-a-commits-temporary-tables.md).
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
  /** Where each record orders its own keys (JSON): the keys of a new target's first applied record (first-applied-order.ts). */
  recordKeys?: RecordKeys;
  /**
   * Once the commit has ended, applied or not: remove what staging made outside the database
   * (files an engine may read again at any point of the commit, as Spark re-reads a file behind a
   * view whose cache it dropped).
   */
  release?(): void;
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
  checkFlowNames(flow, driver.dialect);
  await ensureCatalog(driver, storeNames(flow.target));
  try {
    return await withScratch(driver, () => stageAndCommit(driver, flow, spec, started));
  } finally {
    spec.release?.();
  }
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
  // Staging writes only temporary tables: it runs before the transaction, so that a reader that
  // refuses a file does not abort one. Where the lock is a write of its own instead (Spark's
  // lease: CommitExecutor.locksWhileStaging), the lock is taken while the input is staged.
  const stagedFirst = executor.locksWhileStaging ? undefined : await spec.stage(driver);
  // A batch of few records, none of which can reach every key (a truncate, a snapshot's implied
  // deletes): its commit's results are small too (Driver.transaction's `small`).
  const records = stagedFirst?.records;
  const small = records !== undefined && records < LARGE_COMMIT && !spec.prepare && flow.applyAsTruncates === undefined;
  // The commit record is the commit's last write unless a write follows it (afterRecord): a lock
  // that is a write of its own may then end with the record (LockRecords).
  const lockReads = lockRecords(d, names, !spec.afterRecord);
  // Time spent waiting for another commit's lock: not this commit's duration.
  let waited = 0;
  const lock = async () => {
    waited = await lockTargetWaited(driver, flow.target, progress, lockReads);
  };
  return driver.transaction(
    async () => {
      const input = stagedFirst ?? (await allEnded([spec.stage(driver), lock()]))[0];
      if (stagedFirst) await lock();
      const { skipped, lexical = new Map(), records, columns: stagedColumns } = input;
      await spec.claim?.(driver);
      const stagedTable = stagedColumns ?? (await driver.columns(TMP.stage)) ?? [];
      // The flow record, this commit's number, whether an earlier commit counted ties, and what was staged.
      // Where scdkit writes the change feed, also which of its own columns the feed has (writeDiff).
      const feedColumns = d.capabilities.changeFeed ? undefined : { table: names.changes, among: FEED_OWN_COLUMNS };
      // What the executor needs to know before the first write is read while the record is.
      const looked = executor.look(driver, names);
      const stored = await readTargetRecords(driver, names, { staged: TMP.stage, rejected: TMP.rejects }, feedColumns);
      const { version, hadTies, rows: read, found } = stored;
      let record = stored.record;
      let stagedRows = read.staged;
      const rejected = read.rejected;
      if (records !== undefined && records !== stagedRows + rejected)
        throw new ScdError('NOT_APPLIED', `the reader counted ${records} records but staged ${stagedRows} and rejected ${rejected}; nothing was applied`, {
          file: flow.origin,
          fix: 'this is a bug in scdkit: please report it with the input file',
        });

      // What the engine needs before a commit writes (without transactions: an interrupted commit's
      // writes undone, this one's labelled with its number; store/recovery.ts).
      const { undone, latest } = await executor.begin(driver, names, version, !!record, looked);
      // An interrupted commit that changed the target's columns had its record put back with its
      // tables: the record is read again, and the live view made again over the tables as they are.
      const recordRestored = undone.includes(names.flows);
      if (recordRestored) record = await readFlowRecord(driver, names);
      // A Debezium flow's sequence follows from its target's source columns: the stored ones once it exists.
      flow = settleDebezium(
        flow,
        (record?.model.source ?? sourceColumnsOf(stagedTable)).map((c) => c.name),
      );
      const settings = semanticSettings(flow);
      const at = new Date().toISOString();
      let model: ColumnModel;
      // The types the staged values are read as: declared, stored, or what the good values say.
      const typing = stagedRows > 0 ? await typeStagedColumns(driver, flow, TMP.stage, stagedTable, lexical, record?.model.source) : undefined;
      const staged = typing ? [...typing.columns, ...stagingColumnsOf(stagedTable)] : stagedTable;
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
        if (changed.length) throw rebuildNeeded(flow, changed);
        model = stagedRows > 0 ? await evolveModel(driver, flow, record, staged, stagedAs, names, at) : record.model;
        if (recordRestored) await driver.run(currentViewSql(flow, model, d, names));
      }
      // Before any statement holds a flow expression (also for an empty input: the batch holds them).
      await checkExpressions(driver, flow, model.source);
      // Names and values the engine would refuse halfway: refused before anything is created.
      checkColumnNames(flow, model, d);
      await checkEndSentinel(driver, flow, model);
      checkInclusiveEnd(flow, model, d);
      const createTarget = async () => {
        await executor.beforeCreate(driver, names, version);
        await checkNewTarget(driver, flow, names);
        // Each step's tables at once where the executor writes so (each a round trip of its own on Spark).
        for (const step of createStoreSql(flow, model, d, names))
          await executor.runWrites(
            driver,
            step.map((sql) => [sql]),
          );
        await writeFlowRecord(driver, names, { model, settings }, at);
      };
      // The target's tables as the rest of the commit reads and writes them (a snapshot's
      // comparison with the live rows too): as of now where scratch may be recomputed (Spark).
      // Begin's versions of the tables serve where no write came after it (a commit that changed
      // the target's columns wrote them).
      const pinReads = async () => {
        names = await executor.pinReads(driver, names, model === record?.model ? latest : undefined);
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
      const stagedNow = stagedRows > 0 || spec.prepare ? stagedColumnsNow(spec.prepare ? await driver.columns(TMP.stage) : stagedTable, stagedAs) : new Map<string, StagedColumn>();
      const compactedBefore = record?.compactedBefore;
      await mapBatch(driver, flow, model, stagedNow, compactedBefore);
      if (orderLater) {
        const ordered = await orderByFirstApplied(driver, spec.recordKeys!, staged);
        if (ordered) {
          model = deriveModel(flow, ordered);
          await driver.dropTemporary([TMP.batch]);
          await mapBatch(driver, flow, model, stagedNow);
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
      const fates = (
        await driver.query(
          `SELECT count(*) AS total, count(*) FILTER (WHERE ${q(REASON)} IS NOT NULL) AS quarantined,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND ${q(DROP)}) AS dropped, count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)}) AS ok,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)} AND ${q(OP)} = ${OP_TRUNCATE}) AS truncates,
         (SELECT count(*) FROM ${q(large ? TMP.dups : TMP.valid)}) AS made
       FROM ${q(TMP.batch)}`,
        )
      )[0]!;
      if (Number(fates.quarantined) > 0) await driver.run(quarantineSql(d, names, stagedTable), [version]);
      if (rejected > 0)
        await driver.run(
          `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw) SELECT CAST($1 AS ${d.types.int}), ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, reason, raw FROM ${q(TMP.rejects)}`,
          [version],
        );
      // The staged rows are mapped (and the unfit ones quarantined with their raw text): free them.
      if (large) await driver.dropTemporary([TMP.stage, TMP.rejects], [], { madeBefore: true });
      const quarantined = rejected + Number(fates.quarantined);
      const dropped = Number(fates.dropped);
      const okRecords = Number(fates.ok);
      if (Number(fates.total) !== stagedRows || Number(fates.total) !== Number(fates.quarantined) + dropped + okRecords)
        throw new ScdError(
          'NOT_APPLIED',
          `${stagedRows} records were staged but ${fates.total} mapped (${fates.quarantined} quarantined, ${dropped} dropped, ${okRecords} valid); nothing was applied`,
          {
            file: flow.origin,
            fix: 'this is a bug in scdkit: please report it with the input file',
          },
        );
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
        await driver.dropTemporary([TMP.batch, TMP.dups]);
        // Valid events: the valid records less the batch's repeats (each set of equal ones stays once).
        validCount = batchIsValid ? okRecords : await num(`SELECT count(*) FROM ${q(TMP.valid)}`);
      }
      const validEvents = { n: validCount, truncates: Number(fates.truncates) };
      const truncated = Number(validEvents.truncates) > 0;
      // Where the engine needs telling (PostgreSQL), the planner learns the size of the valid events
      // and of the keys, which pick the rows of the key state, the log and the target that the
      // commit reads; below ANALYZED_FROM events its estimate from their pages serves.
      const analyzed = validCount >= ANALYZED_FROM;
      if (analyzed)
        await driver.analyzeTemporary(
          TMP.valid,
          model.keys.map((k) => k.name),
        );
      await driver.run(keysSql(flow, model, d, names, { allSlow: truncated }));
      if (analyzed) await driver.analyzeTemporary(TMP.keys);
      const keyCounts = (
        await driver.query(`SELECT count(*) AS keys, count(*) FILTER (WHERE ${q(SLOW)}) AS slow, count(*) FILTER (WHERE NOT ${q(SIMPLE)}) AS walked FROM ${q(TMP.keys)}`)
      )[0]!;
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
      if (truncated || madeAnew) await driver.run(freshSql(model, d, names, { truncates: flow.applyAsTruncates !== undefined }));
      else {
        if (logged > 0) await driver.run(knownSql(model, d));
        await driver.run(d.renameScratch(TMP.valid, TMP.newEvents));
      }
      if (madeAnew) {
        const row = (
          await driver.query(
            `SELECT (SELECT count(*) FROM ${q(TMP.newEvents)}) AS applied, ${mayTie ? `(${tiesSql(model, d, names, { truncates: flow.applyAsTruncates !== undefined })})` : '0'} AS ties, (${keysWithNewsSql(d, model)}) AS keys`,
          )
        )[0]!;
        logged = Number(row.applied);
        madeAnew.ties = Number(row.ties);
        madeAnew.keys = Number(row.keys);
      }
      const eventsApplied = madeAnew ? logged : truncated || logged > 0 ? await num(`SELECT count(*) FROM ${q(TMP.newEvents)}`) : validEvents.n;
      if (truncated && large) await driver.dropTemporary([TMP.valid]);
      // Duplicates, counted: records equal to another of the batch, events the log already holds,
      // and a snapshot's unchanged rows.
      const duplicates = okRecords - Number(validEvents.n) + (Number(validEvents.n) - eventsApplied) + unchanged;
      if (rowsRead !== eventsApplied + duplicates + quarantined + dropped + skipped)
        throw new ScdError(
          'NOT_APPLIED',
          `${rowsRead} records read but ${eventsApplied} applied + ${duplicates} duplicates + ${quarantined} quarantined + ${dropped} dropped + ${skipped} skipped; nothing was applied`,
          {
            file: flow.origin,
            fix: 'this is a bug in scdkit: please report it with the input file',
          },
        );
      // Where the executor writes at once and nothing of the commit reads the log after its append
      // (every key simple: no walk, no ties to count), the append goes with the target's and the key
      // state's writes; otherwise now, before the scratch that reads the log (which a write to the
      // log would have the engine compute again: docs/decisions/
      // 0091-the-logs-append-with-the-writes-when-nothing-reads-it.md.
      const appendLater = executor.writesAtOnce && !truncated && Number(keyCounts.walked) === 0;
      if (eventsApplied > 0 && !appendLater) await driver.run(appendEventsSql(model, d, names), [version]);
      const logAppend = eventsApplied > 0 && appendLater ? [appendEventsSql(model, d, names, version)] : [];
      const ties = madeAnew ? madeAnew.ties : eventsApplied && mayTie ? await num(tiesSql(model, d, names, { truncates: flow.applyAsTruncates !== undefined })) : 0;
      // Which keys tied, for the person reading the result (their groups read the slow keys' log,
      // before the keys without news leave it).
      const tiedKeys = ties > 0 ? (await driver.query(tiedKeysSql(model, d, TIED_KEYS_LISTED))).map((row) => textKey(row, model)) : [];
      // Only a slow key can have no new event (a fast key's events are all new).
      // (Where scratch cannot change in place, they are only counted, and recomputed to no change.)
      const keysWithNews = madeAnew ? madeAnew.keys : !truncated && Number(keyCounts.slow) > 0 ? await dropKeysWithoutNews(driver, model) : Number(keyCounts.keys);

      let counts: ChangeCounts = NO_CHANGES;
      if (keysWithNews > 0) {
        progress(`recomputing the history of ${keysWithNews} key${keysWithNews === 1 ? '' : 's'}`);
        counts = await recompute(driver, flow, model, names, version, at, {
          mayTie: ties > 0 || hadTies,
          byStateRow: !truncated && !!d.fetchByRowId,
          freeEarly: large,
          walkedKeys: Number(keyCounts.walked) > 0,
          simpleKeys: Number(keyCounts.walked) < Number(keyCounts.keys),
          // A new target's feed was not there when they were read.
          feedHas: record ? found : undefined,
          keyCount: keysWithNews,
          alongside: [logAppend],
        });
      } else if (logAppend.length) await driver.run(logAppend[0]!);
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
        ...counts,
        durationMs: Date.now() - started - waited,
        ...(tiedKeys.length ? { tiedKeys } : {}),
      };
      progress(`recording commit ${version}`);
      // Nothing reads the scratch now; where holding it makes every later write dearer, it goes
      // first (a failure to drop it loses nothing: withScratch tries again at the end).
      if (executor.scratchBeforeRecord) await discardCommitScratch(driver).catch(() => undefined);
      // The commit record is the last write of the commit proper (store/recovery.ts: a commit is
      // done when it is there); only a write whose loss loses no event comes after it.
      await spec.finish?.(driver, version);
      await recordCommit(driver, names, result);
      await spec.afterRecord?.(driver, version);
      return result;
    },
    { small },
  );
}

/** A tied key as `scd show --key` takes it: each key column's text, in the key's order. */
function textKey(row: Record<string, unknown>, model: ColumnModel): Record<string, string> {
  return Object.fromEntries(model.keys.map((k) => [k.name, String(row[k.name])]));
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
  // An outer alias no column may have (new-events-sql.ts freshSql).
  const k = q(`${INTERNAL_COLUMN_PREFIX}k`);
  const on = model.keys.map((c) => `n.${q(c.name)} = ${k}.${q(c.name)}`).join(' AND ');
  return `SELECT count(*) AS n FROM ${q(TMP.keys)} ${k} WHERE NOT ${k}.${q(SLOW)} OR EXISTS (SELECT 1 FROM ${q(TMP.newEvents)} n WHERE ${on})`;
}

/** Keys whose every event of this batch was a duplicate change nothing: forget them. Returns the keys left. */
async function dropKeysWithoutNews(driver: Driver, model: ColumnModel): Promise<number> {
  const q = driver.dialect.quote;
  const on = (a: string) => model.keys.map((k) => `n.${q(k.name)} = ${a}.${q(k.name)}`).join(' AND ');
  // Only a slow key can have no new event (a fast key's events are all new).
  await driver.run(`DELETE FROM ${q(TMP.keys)} WHERE ${q(SLOW)} AND NOT EXISTS (SELECT 1 FROM ${q(TMP.newEvents)} n WHERE ${on(q(TMP.keys))})`);
  await driver.run(`DELETE FROM ${q(TMP.slowLog)} WHERE NOT EXISTS (SELECT 1 FROM ${q(TMP.keys)} n WHERE ${on(q(TMP.slowLog))})`);
  return Number((await driver.query(`SELECT count(*) AS n FROM ${q(TMP.keys)}`))[0]!.n);
}
