import { allEnded } from '../../dialects/all-ended.js';
import { stagesWhileLocking } from '../../execute/executor.js';
import type { Flow } from '../../flow/flow.js';
import { lockRecords } from '../../store/commits.js';
import { storeNames, TMP } from '../../store/names.js';
import { lockTargetWaited } from '../lock-wait.js';
import type { StagedBatch } from './commit-spec.js';
import type { CommitContext, StagedInput } from './commit-state.js';

/**
 * Staging writes only temporary tables: it runs before the transaction, so that a reader that
 * refuses a file does not abort one. Where the lock is a write of its own instead (Spark's lease:
 * stagesWhileLocking), the input is staged inside, while the lock is taken.
 */
export async function stageBeforeTransaction(ctx: CommitContext): Promise<StagedBatch | undefined> {
  const { spec } = ctx;
  ctx.progress(`reading ${spec.inputs.length === 1 ? spec.inputs[0] : `${spec.inputs.length} inputs`}`);
  return stagesWhileLocking(ctx.executor.guarantees) ? undefined : await spec.stage(ctx.driver);
}

/**
 * Inside the transaction: the input staged (if it was not before) and the target locked, then the
 * inputs claimed (spec.claim). Returns the staged input and the time spent waiting for another
 * commit's lock (not this commit's duration).
 */
export async function stageUnderLock(ctx: CommitContext, flow: Flow, stagedFirst: StagedBatch | undefined): Promise<{ input: StagedInput; waitedMs: number }> {
  const { driver, spec } = ctx;
  // The commit record is the commit's last write unless a write follows it (afterRecord): a lock
  // that is a write of its own may then end with the record (LockRecords).
  const lockReads = lockRecords(driver.dialect, storeNames(flow.target), !spec.afterRecord);
  let waitedMs = 0;
  const lock = async () => {
    waitedMs = await lockTargetWaited(driver, flow.target, ctx.progress, lockReads);
  };
  const staged = stagedFirst ?? (await allEnded([spec.stage(driver), lock()]))[0];
  if (stagedFirst) await lock();
  await spec.claim?.(driver);
  const stagedTable = staged.columns ?? (await driver.columns(TMP.stage)) ?? [];
  return { input: { skipped: staged.skipped, lexical: staged.lexical ?? new Map(), records: staged.records, stagedTable }, waitedMs };
}
