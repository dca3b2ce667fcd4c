import { ScdError } from '../../errors.js';
import type { Flow } from '../../flow/flow.js';
import { readFlowRecord, readTargetRecords } from '../../store/catalog.js';
import { FEED_OWN_COLUMNS } from '../../store/feed.js';
import { storeNames, TMP } from '../../store/names.js';
import type { CommitContext, StagedInput, TargetFound } from './commit-state.js';

/**
 * Under the lock: the flow record, this commit's number, whether an earlier commit counted ties,
 * and what was staged and rejected, in one query; then what the executor does before the first
 * write (without transactions: an interrupted commit's writes undone, this one's labelled;
 * execute/delta/recovery.ts). The reader's count of records must be what was staged and rejected.
 */
export async function findTarget(ctx: CommitContext, flow: Flow, input: StagedInput): Promise<TargetFound> {
  const { driver, executor } = ctx;
  const names = storeNames(flow.target);
  // Where scdkit writes the change feed, also which of its own columns the feed has (writeDiff).
  const feedColumns = driver.dialect.capabilities.changeFeed ? undefined : { table: names.changes, among: FEED_OWN_COLUMNS };
  // What the executor needs to know before the first write is read while the record is.
  const looked = executor.look(driver, names);
  const stored = await readTargetRecords(driver, names, { staged: TMP.stage, rejected: TMP.rejects }, feedColumns);
  const { staged: stagedRows, rejected } = stored.rows;
  if (input.records !== undefined && input.records !== stagedRows + rejected)
    throw new ScdError('NOT_APPLIED', `the reader counted ${input.records} records but staged ${stagedRows} and rejected ${rejected}; nothing was applied`, {
      file: flow.origin,
      fix: 'this is a bug in scdkit: please report it with the input file',
    });
  const { undone, latest } = await executor.begin(driver, names, stored.version, !!stored.record, looked);
  // An interrupted commit that changed the target's columns had its record put back with its
  // tables: the record is read again (and the live view made again: batch-model.ts).
  const recordRestored = undone.includes(names.flows);
  const record = recordRestored ? await readFlowRecord(driver, names) : stored.record;
  return { version: stored.version, hadTies: stored.hadTies, feedHas: stored.found, record, recordRestored, latest, stagedRows, rejected };
}
