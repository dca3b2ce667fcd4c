import { recordCommit } from '../../store/commits.js';
import { discardCommitScratch } from '../scratch.js';
import type { AppliedChanges } from './apply-changes.js';
import type { ApplyResult } from './commit-spec.js';
import type { BatchFates, BatchModel, CommitContext, MappedBatch, NewEvents, StagedInput, TargetFound } from './commit-state.js';

/**
 * The commit's result, recorded: the commit record is the last write of the commit proper
 * (execute/delta/recovery.ts: a commit is done when it is there); spec.finish's writes come before it, and
 * only a write whose loss loses no event after it (spec.afterRecord).
 */
export async function recordResult(
  ctx: CommitContext,
  timing: { started: number; waitedMs: number },
  input: StagedInput,
  target: TargetFound,
  batch: BatchModel,
  mapped: MappedBatch,
  fates: BatchFates,
  news: NewEvents,
  changes: AppliedChanges,
): Promise<ApplyResult> {
  const { driver, spec } = ctx;
  const { version } = target;
  const result: ApplyResult = {
    version,
    operation: 'apply',
    committedAt: batch.at,
    inputs: spec.inputs,
    rowsRead: mapped.rowsRead,
    eventsApplied: news.applied,
    duplicates: news.duplicates,
    ties: changes.ties,
    quarantined: fates.quarantined,
    dropped: fates.dropped,
    skipped: input.skipped,
    expectations: fates.expectations,
    ...changes.counts,
    // Time spent waiting for another commit's lock is not this commit's duration.
    durationMs: Date.now() - timing.started - timing.waitedMs,
    ...(changes.tiedKeys.length ? { tiedKeys: changes.tiedKeys } : {}),
  };
  ctx.progress(`recording commit ${version}`);
  // Nothing reads the scratch now; where holding it makes every later write dearer, it goes
  // first (a failure to drop it loses nothing: withScratch tries again at the end).
  if (driver.scratchSlowsWrites) await discardCommitScratch(driver).catch(() => undefined);
  await spec.finish?.(driver, version);
  await recordCommit(driver, mapped.names, result);
  await spec.afterRecord?.(driver, version);
  return result;
}
