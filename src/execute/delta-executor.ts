import { allEnded } from '../dialects/all-ended.js';
import type { Dialect } from '../dialects/dialect.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import { PINNED_TABLES } from '../store/names.js';
import { commitLabel, dropUnfinishedCreation, interruptedBy, latestWrites, undoInterruptedCommit } from '../store/recovery.js';
import type { CommitExecutor } from './executor.js';
import { type StateChange, stateInsertSql } from './state-change.js';
import type { TargetChange } from './target-change.js';

/**
 * A MERGE source of at most this many values (rows × columns) is sent whole to the join with its
 * table (Dialect.sentWhole): the table is then read where it lies instead of shuffled to meet the
 * source. Above it, the engine's own choice: a large source sent whole would fill the driver's
 * memory (docs/decisions/0090-a-small-merge-source-is-sent-whole.md).
 */
export const SENT_WHOLE_VALUES = 5_000_000;

/** The source as the MERGE reads it: sent whole where the dialect can and it is small. */
function mergeSource(d: Dialect, select: string, values: number): string {
  return d.sentWhole && values <= SENT_WHOLE_VALUES ? d.sentWhole(select) : select;
}

/**
 * The executor of an engine without multi-statement transactions whose tables keep versions and
 * label their commits (Delta Lake on Spark): each write of an scdkit commit is an engine commit of
 * its own, so the writes come in an order a crash can be undone from (store/recovery.ts: the
 * commit record last), each carries the commit's label, an interrupted commit is undone before
 * the next one writes, and the target changes in exactly one MERGE by identity, so that a reader
 * of the table only ever sees whole scdkit commits.
 */
export const deltaExecutor: CommitExecutor = {
  kind: 'delta',
  // The target's lease is a Delta write of its own: taken while the input is staged.
  locksWhileStaging: true,
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
  async pinReads(driver, names, latest) {
    if (!driver.pinReads) throw new Error(`the ${driver.dialect.name} driver has no pinReads, which a commit without transactions needs to read its tables as of its start`);
    const writes = await driver.pinReads(
      PINNED_TABLES.map((t) => names[t]),
      latest,
    );
    return { ...names, writes: Object.fromEntries(PINNED_TABLES.map((t) => [t, writes[names[t]]!])) };
  },
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
  // (store/recovery.ts), so writes that read nothing the others write run at once: the engine
  // plans one while it scans for the other.
  writesAtOnce: true,
  async runWrites(driver, groups) {
    await allEnded(
      groups.map(async (group) => {
        for (const sql of group) await driver.run(sql);
      }),
    );
  },
  // Every write by name (the commit record, the file records) has Spark's cache manager look
  // through each cached plan, and a walk's cached plans carry their whole lineage: they go first.
  scratchBeforeRecord: true,
};

/**
 * The key state of the recomputed keys as one MERGE: a key's new row replaces its old one; a key
 * without a new row loses its row.
 */
function stateMergeSql(q: (s: string) => string, change: StateChange, source: (select: string) => string): string {
  const { state, keys, columns, recomputed, rows } = change;
  const has = q(`${INTERNAL_COLUMN_PREFIX}has`);
  const r = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}r${i}`);
  const rest = columns.filter((c) => !keys.includes(c));
  return `MERGE INTO ${state} t USING ${source(`(
  SELECT ${keys.map((k) => `k.${q(k)}`).join(', ')}, ${rest.map((c, i) => `n.${r(i)} AS ${q(c)}`).join(', ')}, n.${r(0)} IS NOT NULL OR n.${r(rest.length - 1)} IS NOT NULL AS ${has}
  FROM (SELECT DISTINCT ${keys.map(q).join(', ')} FROM ${recomputed}) k
  LEFT JOIN (SELECT ${columns.map((_, i) => (i < keys.length ? `x${i}` : `x${i} AS ${r(i - keys.length)}`)).join(', ')} FROM (${rows}) AS x(${columns.map((_, i) => `x${i}`).join(', ')})) n
    ON ${keys.map((k, i) => `n.x${i} = k.${q(k)}`).join(' AND ')})`)} s
ON ${keys.map((k) => `t.${q(k)} = s.${q(k)}`).join(' AND ')}
WHEN MATCHED AND NOT s.${has} THEN DELETE
WHEN MATCHED THEN UPDATE SET ${rest.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}
WHEN NOT MATCHED AND s.${has} THEN INSERT (${columns.map(q).join(', ')}) VALUES (${columns.map((c) => `s.${q(c)}`).join(', ')})`;
}

/**
 * The change as one MERGE by identity: a removed row alone is deleted, an added row alone
 * inserted; a pair is a close (only the closing columns change) or an update of every other column.
 */
export function mergeByIdentity(q: (s: string) => string, change: TargetChange, source: (select: string) => string = (select) => select): string {
  const { target: T, columns: cols, identity: id, closing, removed, added, flags } = change;
  const m = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}m${i}`);
  const action = q(`${INTERNAL_COLUMN_PREFIX}action`);
  const others = cols.filter((c) => !id.includes(c));
  return `MERGE INTO ${T} t USING ${source(`(
  SELECT ${id.map((c, i) => `coalesce(a.${q(c)}, r.${q(c)}) AS ${m(i)}`).join(', ')}, ${cols.map((c) => `a.${q(c)} AS ${q(c)}`).join(', ')},
    CASE WHEN a.${q(id[0]!)} IS NULL THEN 'delete' WHEN a.${q(flags.close)} THEN 'close' WHEN r.${q(id[0]!)} IS NULL THEN 'insert' ELSE 'update' END AS ${action}
  FROM ${added} a FULL JOIN ${removed} r ON ${id.map((c) => `a.${q(c)} = r.${q(c)}`).join(' AND ')})`)} s
ON ${id.map((c, i) => `t.${q(c)} = s.${m(i)}`).join(' AND ')}
WHEN MATCHED AND s.${action} = 'delete' THEN DELETE${
    closing.length
      ? `
WHEN MATCHED AND s.${action} = 'close' THEN UPDATE SET ${closing.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}`
      : ''
  }${
    others.length
      ? `
WHEN MATCHED AND s.${action} = 'update' THEN UPDATE SET ${others.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}`
      : ''
  }
WHEN NOT MATCHED AND s.${action} = 'insert' THEN INSERT (${cols.map(q).join(', ')}) VALUES (${cols.map((c) => `s.${q(c)}`).join(', ')})`;
}
