import { allEnded } from '../../dialects/all-ended.js';
import type { Driver } from '../../dialects/driver.js';
import { flowRecordValues } from '../../store/catalog.js';
import { commitLabel } from '../../store/commit-labels.js';
import { PINNED_TABLES, type StoreNames, TMP, written } from '../../store/names.js';
import type { CommitExecutor } from '../executor.js';
import { stateInsertSql } from '../state-change.js';
import { flowRecordMergeSql } from './flow-record-merge.js';
import { foldMergeSql } from './fold-merge.js';
import { mergeSource } from './merge-source.js';
import { dropUnfinishedCreation, interruptedBy, latestWrites, undoInterruptedCommit } from './recovery.js';
import { stateMergeSql } from './state-merge.js';
import { mergeByIdentity } from './target-merge.js';

/**
 * The executor of an engine without multi-statement transactions whose tables keep versions and
 * label their commits (Delta Lake on Spark): each write of an scdkit commit is an engine commit of
 * its own, so the writes come in an order a crash can be undone from (recovery.ts: the commit record
 * last), each carries the commit's label, an interrupted commit is undone before
 * the next one writes, and the target changes in exactly one MERGE by identity, so that a reader
 * of the table only ever sees whole scdkit commits.
 */
export const deltaExecutor: CommitExecutor = {
  // Each write a Delta commit of its own, labelled; every table keeps its versions (RESTORE, time travel).
  guarantees: { transactions: false, versionedTables: true, labelledCommits: true },
  // The tables' latest versions, read while the flow record is (a first commit's tables are not
  // there yet: nothing to look at, and begin needs nothing).
  look: (driver, names) => latestWrites(driver, names).catch(() => undefined),
  async begin(driver, names, version, recorded, looked) {
    const latest = recorded ? ((await looked) ?? (await latestWrites(driver, names))) : undefined;
    const interrupted = latest !== undefined && interruptedBy(latest, names, version);
    const undone = interrupted ? await undoInterruptedCommit(driver, names, version) : [];
    // executorFor chose this executor for a dialect with commitLabel.
    await driver.run(driver.dialect.commitLabel!(commitLabel(names.target, version)));
    // The versions read are the latest unless the undo wrote (then pinReads reads them again).
    return { undone, latest: latest && !interrupted ? Object.fromEntries(Object.entries(latest).map(([t, h]) => [t, h.version])) : undefined };
  },
  async beforeCreate(driver, names, version) {
    // An interrupted first commit may have left its tables.
    await dropUnfinishedCreation(driver, names, version);
  },
  // Scratch may be recomputed from what it read (Spark's cache): the rest of the commit reads the
  // target's tables as they are now, and writes them by the names the driver gives.
  pinReads: pinnedNames,
  // executorFor chose this executor for a dialect with MERGE.
  targetWrites(d, change, sizes) {
    const rows = sizes.added + sizes.removed;
    return rows > 0 ? [mergeByIdentity(d.quote, change, (select) => mergeSource(d, select, rows * change.columns.length))] : [];
  },
  // One MERGE of the recomputed keys: the state changes in one commit of its own.
  stateWrites: (d, change) => [
    change.empty
      ? stateInsertSql(d, change)
      : stateMergeSql(d.quote, change, (select) => (change.keyCount === undefined ? select : mergeSource(d, select, change.keyCount * change.columns.length))),
  ],
  // Each write is a Delta commit of its own and the labelled undo does not depend on their order
  // (recovery.ts), so writes that read nothing the others write run at once (writesMayRunAtOnce):
  // the engine plans one while it scans for the other.
  async runWrites(driver, groups) {
    await allEnded(
      groups.map(async (group) => {
        for (const sql of group) await driver.run(sql);
      }),
    );
  },
  // The log overwritten in one write of its own (an undo puts it back), then read again as it now is.
  async replaceLog(driver, names, rewrite) {
    const q = driver.dialect.quote;
    const columns = rewrite.columns.join(', ');
    await driver.run(driver.dialect.scratch(TMP.relogged, rewrite.select));
    await driver.run(`INSERT OVERWRITE ${written(names, 'events', q)} (${columns}) SELECT ${columns} FROM ${q(TMP.relogged)}`);
    return pinnedNames(driver, names);
  },
  // The table keeps its versions for an undo (and its columns: a rebuild here keeps the key columns).
  async emptyState(driver, names) {
    await driver.run(`DELETE FROM ${written(names, 'state', driver.dialect.quote)}`);
  },
  // One write of the log: the old events out and the folds in.
  async foldLog(driver, fold) {
    await driver.run(foldMergeSql(fold, driver.dialect.quote), fold.params);
  },
  // Replaced by one MERGE, never deleted in one write and written in another (an interruption
  // between the two would leave the target without its record).
  async writeFlowRecord(driver, names, record, at) {
    await driver.run(flowRecordMergeSql(driver.dialect, names), flowRecordValues(names, record, at));
  },
};

/**
 * The names the rest of the commit reads and writes the target's tables by: scratch may be
 * recomputed from what it read (Spark's cache), so the target's tables are read as they are now
 * (or at `latest`), and written by the names the driver gives.
 */
async function pinnedNames(driver: Driver, names: StoreNames, latest?: Record<string, number>): Promise<StoreNames> {
  const pinReads = driver.pinReads;
  if (!pinReads) throw new Error(`a commit without transactions needs pinReads, which the ${driver.dialect.name} driver lacks`);
  const writes = await pinReads.call(
    driver,
    PINNED_TABLES.map((t) => names[t]),
    latest,
  );
  return { ...names, writes: Object.fromEntries(PINNED_TABLES.map((t) => [t, writes[names[t]]!])) };
}
