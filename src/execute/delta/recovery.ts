import type { Driver, TableVersion } from '../../dialects/driver.js';
import { commitLabel, commitOfLabel } from '../../store/commit-labels.js';
import type { StoreNames } from '../../store/names.js';

/**
 * How a commit is made whole on an engine without multi-statement transactions (Delta Lake),
 * where each write of a commit is a Delta commit of its own (docs/SPARK.md "Crashes"):
 *
 * - every write of scdkit commit N carries the label commitLabel(target, N) as its Delta
 *   `userMetadata` (set for the session while the commit writes; visible in DESCRIBE HISTORY;
 *   store/commit-labels.ts);
 * - the commit record (the `_scd_commits` row) is written last: a commit is done when, and only
 *   when, its record is there;
 * - the next commit of the target (under the target's lease) looks for writes of a commit without
 *   a record (the label of each table's latest write of scdkit's), and undoes them: every table of
 *   the target back to its Delta version before the first write so labelled (RESTORE), the shared
 *   files table by its version column. The interrupted commit's inputs are then still to apply (a
 *   landing folder applies them again);
 * - a Delta commit scdkit did not make (an OPTIMIZE by a person's job or Databricks' predictive
 *   optimization: no label, no row changed) is looked past, never taken for the table's latest
 *   write: it must not hide an interrupted commit's writes under it.
 *
 * The state is a function of the events (SEMANTICS §3): back at commit N - 1, the next apply
 * computes what commit N would have, from the same inputs.
 */
/** The tables of one target that a commit writes, each a Delta table of its own. */
function targetTables(names: StoreNames): string[] {
  return [names.events, names.quarantine, names.state, names.target];
}

/**
 * How far back a table's history is read for its latest write of scdkit's when its newest version
 * is someone else's (OPTIMIZE). More foreign commits than this after an interrupted commit hide it.
 */
export const LOOK_BACK = 50;

/** A version scdkit wrote for `target` (its label), or one that put the table back (a restore). */
function isScdkits(target: string, v: TableVersion): boolean {
  return commitOfLabel(target, v.label) !== undefined || v.restoredTo !== undefined;
}

/** A table's newest engine version, and the label of its newest version of scdkit's (null: none seen). */
export interface LatestWrite {
  version: number;
  label: string | null;
}

/**
 * Each of the target's tables: its newest engine version, and the label of scdkit's newest write
 * to it (a restore's label where a restore is newer). One round trip per table, read at once; a
 * table whose newest version is someone else's is read again, LOOK_BACK versions deep.
 */
export async function latestWrites(driver: Driver, names: StoreNames): Promise<Record<string, LatestWrite>> {
  const history = driver.tableHistory?.bind(driver);
  if (!history) throw new Error(`the ${driver.dialect.name} driver cannot read its tables' versions, which finding an interrupted commit needs`);
  const tables = targetTables(names);
  const latest = await Promise.all(
    tables.map(async (t): Promise<LatestWrite | undefined> => {
      const newest = (await history(t, 1)).at(-1);
      if (!newest || isScdkits(names.target, newest)) return newest && { version: newest.version, label: newest.label };
      const ours = (await history(t, LOOK_BACK)).filter((v) => isScdkits(names.target, v)).at(-1);
      return { version: newest.version, label: ours?.label ?? null };
    }),
  );
  return Object.fromEntries(tables.flatMap((t, i) => (latest[i] ? [[t, latest[i]!]] : [])));
}

/**
 * Whether a table of the target was last written by scdkit under the label of commit `version` or
 * later, which has no record yet (an interrupted commit), given each table's latest write
 * (latestWrites). Only a commit's own writes carry its label, and undoInterruptedCommit puts back
 * exactly the tables whose latest write of scdkit's carries it. (A recovery's RESTORE may carry
 * the label it undoes: a table so put back is found again, and put back to the same version,
 * which changes nothing.)
 */
export function interruptedBy(latest: Record<string, LatestWrite>, names: StoreNames, version: number): boolean {
  return Object.values(latest).some((h) => (commitOfLabel(names.target, h.label) ?? 0) >= version);
}

/**
 * The version to put `history` (a table's, oldest first) back to, undoing the writes labelled
 * `label`: the one before the first of them, where scdkit's newest version carries the label
 * (someone else's versions after it, an OPTIMIZE, are undone with them and change no row);
 * undefined where nothing is to undo (no such write, or a restore since put the table back).
 */
export function versionBefore(history: TableVersion[], target: string, label: string): number | undefined {
  const labelled = history.filter((h) => h.label === label).map((h) => h.version);
  const newest = history.filter((h) => isScdkits(target, h)).at(-1);
  if (!labelled.length || newest?.label !== label) return undefined;
  const before = Math.min(...labelled) - 1;
  return before < 0 ? undefined : before;
}

/**
 * Undo what an interrupted commit wrote (its number is `version`: the last recorded plus one).
 * Returns the tables restored. Reads each table's history: one round trip per table.
 */
export async function undoInterruptedCommit(driver: Driver, names: StoreNames, version: number): Promise<string[]> {
  if (!driver.restoreTable || !driver.tableHistory) throw new Error(`the ${driver.dialect.name} driver commits in transactions: nothing is left to undo`);
  const label = commitLabel(names.target, version);
  const restored: string[] = [];
  for (const table of targetTables(names)) {
    if (!(await driver.columns(table))) continue;
    const before = versionBefore(await driver.tableHistory(table), names.target, label);
    if (before === undefined) continue;
    await driver.restoreTable(table, before);
    restored.push(table);
  }
  const q = driver.dialect.quote;
  if (await driver.columns(names.files)) await driver.run(`DELETE FROM ${q(names.files)} WHERE target = $1 AND version >= $2`, [names.target, version]);
  if (await restoreFlowRecord(driver, names, version)) restored.push(names.flows);
  return restored;
}

/**
 * A commit that changed the target's columns rewrote its flow record (the model) after altering
 * the tables; its undo puts the tables back, and so the record too: the target's row of the
 * shared flows table as it was before the commit's first write to it. Returns whether there was
 * one to put back (only an evolving commit writes the record).
 */
async function restoreFlowRecord(driver: Driver, names: StoreNames, version: number): Promise<boolean> {
  const d = driver.dialect;
  if (!driver.tableHistory || !d.tableAtVersion) throw new Error(`the ${d.name} driver cannot read its tables' versions, which undoing an interrupted commit needs`);
  // The shared table's history may hold an earlier target of the same name: only the versions
  // after this target's latest write of an earlier commit (its first commit made the record) count.
  const history = (await driver.tableHistory(names.flows)).map((h) => ({ version: h.version, commit: commitOfLabel(names.target, h.label) }));
  let earlier = -1;
  history.forEach((h, i) => {
    if (h.commit !== undefined && h.commit < version) earlier = i;
  });
  const first = history.slice(earlier + 1).find((h) => h.commit === version);
  if (earlier < 0 || !first) return false;
  const q = d.quote;
  await driver.run(
    `MERGE INTO ${q(names.flows)} f USING (SELECT * FROM ${d.tableAtVersion(names.flows, first.version - 1)} WHERE target = $1) s ON f.target = s.target
     WHEN MATCHED THEN UPDATE SET model = s.model, settings = s.settings, created_at = s.created_at`,
    [names.target],
  );
  return true;
}

/** Delta operations that change no row: someone's upkeep of a table, never a write of data. */
const UPKEEP = new Set(['OPTIMIZE', 'VACUUM START', 'VACUUM END']);
const isUpkeep = (h: TableVersion) => h.label === null && h.operation !== undefined && UPKEEP.has(h.operation);

/**
 * A target's first commit makes its tables before it writes the flow record; interrupted between
 * the two, the tables are there and no record names them. A table of the target whose every
 * engine version carries that first commit's label was made by it (nothing else writes under the
 * label) and goes, the target's live view with the target, so that the commit starts over; an
 * unlabelled upkeep version among them (an OPTIMIZE) changes no row and does not count. A table
 * with any other version is someone's, and is left for the new-target check to refuse.
 * Returns the tables dropped.
 */
export async function dropUnfinishedCreation(driver: Driver, names: StoreNames, version: number): Promise<string[]> {
  if (!driver.tableHistory) throw new Error(`the ${driver.dialect.name} driver commits in transactions: no creation is left unfinished`);
  const label = commitLabel(names.target, version);
  const q = driver.dialect.quote;
  const dropped: string[] = [];
  for (const table of targetTables(names)) {
    if (!(await driver.columns(table))) continue;
    const history = await driver.tableHistory(table);
    if (!history.some((h) => h.label === label) || !history.every((h) => h.label === label || isUpkeep(h))) continue;
    if (table === names.target) await driver.run(`DROP VIEW IF EXISTS ${q(names.current)}`);
    await driver.run(`DROP TABLE ${q(table)}`);
    dropped.push(table);
  }
  return dropped;
}
