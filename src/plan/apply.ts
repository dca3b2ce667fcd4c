import type { Driver } from '../dialects/driver.js';
import { executorFor } from '../execute/executor.js';
import type { Flow } from '../flow/flow.js';
import { ensureCatalog } from '../store/catalog.js';
import { storeNames } from '../store/names.js';
import { applyChanges } from './commit/apply-changes.js';
import { decideFates, LARGE_COMMIT } from './commit/batch-fates.js';
import { findKeys } from './commit/batch-keys.js';
import { modelBatch } from './commit/batch-model.js';
import type { ApplyResult, CommitSpec } from './commit/commit-spec.js';
import type { CommitContext } from './commit/commit-state.js';
import { mapToEvents } from './commit/mapped-batch.js';
import { findNewEvents } from './commit/new-events.js';
import { recordResult } from './commit/record.js';
import { stageBeforeTransaction, stageUnderLock } from './commit/stage.js';
import { StepClock } from './commit/step-clock.js';
import { findTarget } from './commit/target-found.js';
import { reportDiskFull } from './disk-full.js';
import { checkSpelling } from './expression.js';
import { checkFlowNames } from './name-limits.js';
import type { ChangeCounts } from './recompute.js';
import { withScratch } from './scratch.js';

export type { ApplyResult, CommitSpec, Progress, StagedBatch } from './commit/commit-spec.js';

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
 * The commit's steps, in order, each over what the steps before it found (commit/commit-state.ts):
 * stage (before the transaction where the lock is the transaction's) → lock, claim → the target as
 * found → the batch's types and model → events mapped → each record's fate → keys → new events →
 * log, ties, recomputation and diff → the commit recorded. Each is timed (StepClock: the result's
 * `steps`).
 */
async function stageAndCommit(driver: Driver, flow: Flow, spec: CommitSpec, started: number): Promise<ApplyResult> {
  const ctx: CommitContext = { driver, spec, executor: executorFor(driver.dialect), progress: spec.progress ?? (() => {}) };
  const clock = new StepClock();
  const stagedFirst = await clock.time('stage', () => stageBeforeTransaction(ctx), 'records');
  // A batch of few records, none of which can reach every key (a truncate, a snapshot's implied
  // deletes): its commit's results are small too (Driver.transaction's `small`).
  const records = stagedFirst?.records;
  const small = records !== undefined && records < LARGE_COMMIT && !spec.prepare && flow.applyAsTruncates === undefined;
  return driver.transaction(
    async () => {
      // Where the lock is a write of its own, the input is staged while it is taken (stage.ts).
      const locking = stagedFirst ? 'lock' : 'stage and lock';
      const { input, waitedMs } = await clock.time(locking, () => stageUnderLock(ctx, flow, stagedFirst));
      const target = await clock.time('target', () => findTarget(ctx, flow, input));
      const batch = await clock.time('types', () => modelBatch(ctx, flow, input, target));
      const mapped = await clock.time('events', () => mapToEvents(ctx, input, target, batch), 'stagedRows');
      const fates = await clock.time('fates', () => decideFates(ctx, batch.flow, input, target, mapped), 'validEvents');
      const keys = await clock.time('keys', () => findKeys(ctx, batch.flow, mapped, fates), 'keys');
      const news = await clock.time('new events', () => findNewEvents(ctx, batch.flow, input, mapped, fates, keys), 'applied');
      const changes = await clock.time(
        'changes',
        () => applyChanges(ctx, batch, target, mapped, fates, keys, news),
        (c) => rowsChanged(c.counts),
      );
      const result = await clock.time('record', () => recordResult(ctx, { started, waitedMs }, input, target, batch, mapped, fates, news, changes));
      return { ...result, steps: clock.steps };
    },
    { small },
  );
}

/** The target's rows a commit wrote: versions added, changed and removed. */
function rowsChanged(c: ChangeCounts): number {
  return c.versionsAdded + c.versionsChanged + c.versionsRemoved;
}
