import type { Driver } from '../../dialects/driver.js';
import { writesMayRunAtOnce } from '../../execute/executor.js';
import { TIED_KEYS_LISTED } from '../../store/commits.js';
import { TMP } from '../../store/names.js';
import { appendEventsSql } from '../events-sql.js';
import { SLOW } from '../keys-sql.js';
import type { ColumnModel } from '../model.js';
import { tiedKeysSql, tiesSql } from '../new-events-sql.js';
import { type ChangeCounts, NO_CHANGES, recompute } from '../recompute.js';
import type { BatchFates, BatchModel, CommitContext, KeyCounts, MappedBatch, NewEvents, TargetFound } from './commit-state.js';
import { countOf } from './count.js';

/** What the commit changed: the change counts, the batch's ties and which keys tied. */
export interface AppliedChanges {
  counts: ChangeCounts;
  ties: number;
  tiedKeys: Array<Record<string, string>>;
}

/**
 * The new events appended to the log, their ties counted (and the tied keys named), the keys
 * without news forgotten, then the keys with news recomputed and the diff written (recompute.ts).
 */
export async function applyChanges(
  ctx: CommitContext,
  batch: BatchModel,
  target: TargetFound,
  mapped: MappedBatch,
  fates: BatchFates,
  keys: KeyCounts,
  news: NewEvents,
): Promise<AppliedChanges> {
  const { driver, executor } = ctx;
  const d = driver.dialect;
  const { flow, at } = batch;
  const { model, names } = mapped;
  const { version } = target;
  const { truncated } = fates;
  // Where the executor writes at once and nothing of the commit reads the log after its append
  // (every key simple: no walk, no ties to count), the append goes with the target's and the key
  // state's writes; otherwise now, before the scratch that reads the log (which a write to the
  // log would have the engine compute again: docs/decisions/0091-the-logs-append-with-the-writes-when-nothing-reads-it.md).
  const appendWithWrites = writesMayRunAtOnce(executor.guarantees) && !truncated && keys.walked === 0;
  if (news.applied > 0 && !appendWithWrites) await driver.run(appendEventsSql(model, d, names), [version]);
  const logAppend = news.applied > 0 && appendWithWrites ? [appendEventsSql(model, d, names, version)] : [];
  // Only a walked (not simple) key's events, or a truncate, can tie.
  const mayTie = truncated || keys.walked > 0;
  const truncates = flow.applyAsTruncates !== undefined;
  const ties = news.counted ? news.counted.ties : news.applied && mayTie ? await countOf(driver, tiesSql(model, d, names, { truncates })) : 0;
  // Which keys tied, for the person reading the result (their groups read the slow keys' log,
  // before the keys without news leave it).
  const tiedKeys = ties > 0 ? (await driver.query(tiedKeysSql(model, d, TIED_KEYS_LISTED))).map((row) => textKey(row, model)) : [];
  // Only a slow key can have no new event (a fast key's events are all new). Where the new events
  // were made anew, such keys are only counted, and recomputed to no change.
  const keysWithNews = news.counted ? news.counted.keysWithNews : !truncated && keys.slow > 0 ? await dropKeysWithoutNews(driver, model) : keys.keys;
  if (keysWithNews === 0) {
    if (logAppend.length) await driver.run(logAppend[0]!);
    return { counts: NO_CHANGES, ties, tiedKeys };
  }
  ctx.progress(`recomputing the history of ${keysWithNews} key${keysWithNews === 1 ? '' : 's'}`);
  const counts = await recompute(driver, flow, model, names, version, at, {
    mayTie: ties > 0 || target.hadTies,
    byStateRow: !truncated && !!d.fetchByRowId,
    freeEarly: fates.freeEarly,
    walkedKeys: keys.walked > 0,
    simpleKeys: keys.walked < keys.keys,
    // A new target's feed was not there when they were read.
    feedHas: target.record ? target.feedHas : undefined,
    keyCount: keysWithNews,
    alongside: [logAppend],
  });
  return { counts, ties, tiedKeys };
}

/** A tied key as `scd show --key` takes it: each key column's text, in the key's order. */
function textKey(row: Record<string, unknown>, model: ColumnModel): Record<string, string> {
  return Object.fromEntries(model.keys.map((k) => [k.name, String(row[k.name])]));
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
