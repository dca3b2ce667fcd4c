import { type Driver, hasRow } from '../dialects/driver.js';
import { executorFor, writesMayRunAtOnce } from '../execute/executor.js';
import type { Flow } from '../flow/flow.js';
import { ensureFeedColumns } from '../store/feed.js';
import { type StoreNames, TMP } from '../store/names.js';
import { DIFF_VIEWS, diffSql, WALKED, wholeDiffSql } from './diff-sql.js';
import { rebuiltStateSql, stateChange } from './key-state-sql.js';
import { SIMPLE } from './keys-sql.js';
import type { ColumnModel } from './model.js';
import { targetColumns } from './target.js';
import { eventsSql, LOG_VIEW, prevSql } from './walk-input-sql.js';
import { canMarkTies, TIE, walkSql } from './walk-sql.js';

export interface RecomputeOptions {
  /** Every key from the whole log (a rebuild): the walk reads the log, and the key state is rebuilt. */
  wholeLog?: boolean;
  /** Ties are likely (this commit or an earlier one counted some): walkKeys groups before it walks. */
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
  /** How many keys TMP.keys holds, where counted. */
  keyCount?: number;
  /**
   * Groups of writes of the commit that read nothing the recomputation writes and that nothing of
   * it reads (the log's append, where no scratch reads the log), run with the target's writes
   * where the executor writes at once (CommitExecutor.runWrites).
   */
  alongside?: string[][];
}

/**
 * Recompute the keys of TMP.keys (slow: from the log; fast: from their live version) and write
 * what changed: target rows, change feed, key state. Returns the change counts.
 */
export async function recompute(
  driver: Driver,
  flow: Flow,
  model: ColumnModel,
  names: StoreNames,
  version: number,
  at: string,
  options: RecomputeOptions = {},
): Promise<ChangeCounts> {
  const { wholeLog = false, mayTie = true, byStateRow = false, freeEarly = true } = options;
  const walked = wholeLog || options.walkedKeys !== false;
  const d = driver.dialect;
  const q = d.quote;
  const columns = targetColumns(flow, model, d).map((c) => c.name);
  const events = wholeLog ? LOG_VIEW : TMP.events;
  if (walked) {
    if (!wholeLog) await driver.run(prevSql(flow, model, d, names, columns));
    await driver.run(eventsSql(flow, model, d, names, { fastKeys: !wholeLog, wholeLog }));
    await walkKeys(driver, flow, model, events, mayTie);
    // Every key recomputed: the rows that come out as they were are paired off first (narrowly).
    if (wholeLog) for (const sql of wholeDiffSql(flow, model, d, names)) await driver.run(sql);
  }
  // Simple keys are written by their own statements (none in a rebuild or a batch of late events).
  const simpleKeys = wholeLog ? false : (options.simpleKeys ?? (await hasRow(driver, q(TMP.keys), q(SIMPLE))));
  // Neither the key state's writes nor the target's read what the other writes: written in turn
  // (the state first), or at once with the target's where the executor writes at once.
  // Only a rebuild recomputes the whole log, and it has just recreated the state empty.
  // A batch with a truncate recomputes every key (keysSql's allSlow), without their rows of the state.
  const executor = executorFor(d);
  const stateWrites = wholeLog
    ? rebuiltStateSql(flow, model, d, names)
    : executor.stateWrites(d, stateChange(model, d, names, { events, byRow: byStateRow, walked, keyCount: options.keyCount }));
  const atOnce = writesMayRunAtOnce(executor.guarantees);
  if (!atOnce) for (const sql of stateWrites) await driver.run(sql);
  const alongside = [...(atOnce ? [stateWrites] : []), ...(options.alongside ?? [])];
  return writeDiff(driver, flow, model, names, version, at, {
    recomputed: wholeLog ? TMP.changed : TMP.recomputed,
    freeEarly,
    walkedKeys: walked,
    simpleKeys,
    feedHas: options.feedHas,
    alongside,
  });
}

/**
 * The walk of `events` into TMP.recomputed, ordered without the payloads unless two events of a key share
 * sequence and operation (a tie). Unless ties are likely (`mayTie`: this commit or an earlier one
 * counted some), the walk finds its ties itself where it can (walk-sql.ts TIE: one more lag in its
 * sort), and only a walk that found one runs again in the full order; that spares a grouping of
 * every event by key, sequence and operation (docs/decisions/0005-a-walk-without-payloads-checks-itself.md
 * has its cost). Where ties are likely, or
 * the walk cannot mark them, one walk in the full order, which groups the events to find the tied
 * ones (walk-sql.ts withTieOrder).
 */
export async function walkKeys(driver: Driver, flow: Flow, model: ColumnModel, events: string, mayTie: boolean): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  // Marking ties drops the mark's column in place after (temporaryTables).
  if (mayTie || !canMarkTies(flow) || !d.capabilities.temporaryTables) {
    for (const sql of walkSql(flow, model, d, events, TMP.recomputed)) await driver.run(sql);
    return;
  }
  for (const sql of walkSql(flow, model, d, events, TMP.recomputed, { tieFree: true, markTies: true })) await driver.run(sql);
  if (!(await hasRow(driver, q(TMP.recomputed), q(TIE)))) {
    await driver.run(`ALTER TABLE ${q(TMP.recomputed)} DROP COLUMN ${q(TIE)}`);
    return;
  }
  await driver.run(`DROP TABLE ${q(TMP.recomputed)}`);
  for (const sql of walkSql(flow, model, d, events, TMP.recomputed)) await driver.run(sql);
}

/** What a commit changed in its target, by version and key (docs/SEMANTICS.md §5). */
export interface ChangeCounts {
  keysChanged: number;
  versionsAdded: number;
  versionsChanged: number;
  versionsRemoved: number;
  versionsClosed: number;
}

export const NO_CHANGES: ChangeCounts = { keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0, versionsClosed: 0 };

export interface WriteDiffOptions {
  /** The walked keys' recomputed rows. */
  recomputed?: string;
  /** Drop the diff's intermediate tables once written. */
  freeEarly?: boolean;
  /** Some keys were walked (`recomputed` and TMP.stored exist). */
  walkedKeys: boolean;
  /** Some keys are simple. */
  simpleKeys: boolean;
  /** Which of FEED_OWN_COLUMNS the change feed has, read in this transaction; undefined: look. */
  feedHas?: ReadonlySet<string>;
  /** Groups of writes that read nothing the target's change writes (the key state's, the log's append), run with it (CommitExecutor.runWrites). */
  alongside?: string[][];
}

/** Write the difference between the recomputed rows and the stored rows of TMP.keys; return its counts. */
export async function writeDiff(driver: Driver, flow: Flow, model: ColumnModel, names: StoreNames, version: number, at: string, options: WriteDiffOptions): Promise<ChangeCounts> {
  const { recomputed = TMP.recomputed, freeEarly = true, walkedKeys, simpleKeys, feedHas, alongside = [] } = options;
  const d = driver.dialect;
  const q = d.quote;
  // Where the engine keeps the target's changes itself (Delta), scdkit writes no feed.
  const ownFeed = !d.capabilities.changeFeed;
  if (ownFeed) await ensureFeedColumns(driver, flow, names, targetColumns(flow, model, d), feedHas);
  const stored = walkedKeys && (await hasRow(driver, q(TMP.stored)));
  const diff = diffSql(flow, model, d, names, { simpleKeys, walkedKeys, recomputed, stored });
  for (const sql of diff.prepare) await driver.run(sql);
  const row = (await driver.query(diff.counts))[0]!;
  const [added, closes, removed] = [Number(row.added), Number(row.closes), Number(row.removed)];
  if (ownFeed && added + removed > 0) await driver.run(diff.feed, [version, at]);
  const executor = executorFor(d);
  await executor.runWrites(driver, [...alongside, executor.targetWrites(d, diff.change, { added, closes, removed })]);
  // What only the diff read goes now (the key state reads the walk's input and the new events).
  if (freeEarly) await driver.dropTemporary([TMP.simple, TMP.stored, ...Object.values(WALKED)], DIFF_VIEWS);
  return {
    keysChanged: Number(row.keys_changed),
    versionsAdded: Number(row.versions_added),
    versionsChanged: Number(row.versions_changed),
    versionsRemoved: Number(row.versions_removed),
    versionsClosed: Number(row.versions_closed),
  };
}
