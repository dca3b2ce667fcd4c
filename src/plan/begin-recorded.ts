import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';
import type { Flow } from '../flow/flow.js';
import { type FlowRecord, readFlowRecord, readTargetRecords } from '../store/catalog.js';
import { lockRecords } from '../store/commits.js';
import type { StoreNames } from '../store/names.js';
import type { Progress } from './apply.js';
import { lockTargetWaited } from './lock-wait.js';

export interface RecordedStart {
  /** The target's flow record as the commit starts from (put back first if an undo restored it). */
  record: FlowRecord;
  /** This commit's number. */
  version: number;
  /** Whether an earlier commit counted ties. */
  hadTies: boolean;
  /** The target's tables as the commit reads them, and the names it writes them by. */
  names: StoreNames;
  /** How long the commit waited for another commit's lock (ms): not part of its duration. */
  waited: number;
}

/**
 * The start of a commit over a target that exists, whose record is its last write (rebuild,
 * compaction): the target's lock (a lock that is a write of its own ends with that record), the
 * flow record and the commit's number, an interrupted commit undone and this one labelled where
 * the engine has no transactions (execute/delta/recovery.ts), and the tables pinned as of now.
 */
export async function beginRecordedCommit(driver: Driver, flow: Flow, names: StoreNames, progress: Progress, notApplied: string): Promise<RecordedStart> {
  const executor = executorFor(driver.dialect);
  const waited = await lockTargetWaited(driver, flow.target, progress, lockRecords(driver.dialect, names, true));
  const looked = executor.look(driver, names);
  const stored = await readTargetRecords(driver, names);
  if (!stored.record) throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, { file: flow.origin, fix: notApplied });
  const begun = await executor.begin(driver, names, stored.version, true, looked);
  const record = begun.undone.includes(names.flows) ? (await readFlowRecord(driver, names))! : stored.record;
  return { record, version: stored.version, hadTies: stored.hadTies, names: await executor.pinReads(driver, names, begun.latest), waited };
}
