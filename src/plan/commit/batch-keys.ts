import type { Flow } from '../../flow/flow.js';
import { TMP } from '../../store/names.js';
import { keysSql, SIMPLE, SLOW } from '../keys-sql.js';
import type { BatchFates, CommitContext, KeyCounts, MappedBatch } from './commit-state.js';

/**
 * From this many valid events a commit has the engine analyze its valid events and its keys
 * (Driver.analyzeTemporary; PostgreSQL, which never analyzes a temporary table by itself). Below
 * it the two statements are saved: up to about this many events an unanalyzed key list is as
 * fast, and above it slower (the measurements: docs/decisions/0060-postgresql-analyzes-a-commits-temporary-tables.md).
 */
const ANALYZED_FROM = 2_000;

/**
 * The batch's keys (TMP.keys), each marked slow (an event at or before what was applied: its log
 * is read) and simple or walked, and counted. A truncate makes every key slow.
 */
export async function findKeys(ctx: CommitContext, flow: Flow, mapped: MappedBatch, fates: BatchFates): Promise<KeyCounts> {
  const { driver } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  const { model, names } = mapped;
  // Where the engine needs telling (PostgreSQL), the planner learns the size of the valid events
  // and of the keys, which pick the rows of the key state, the log and the target that the
  // commit reads; below ANALYZED_FROM events its estimate from their pages serves.
  const analyzed = fates.validEvents >= ANALYZED_FROM;
  if (analyzed)
    await driver.analyzeTemporary(
      TMP.valid,
      model.keys.map((k) => k.name),
    );
  await driver.run(keysSql(flow, model, d, names, { allSlow: fates.truncated }));
  if (analyzed) await driver.analyzeTemporary(TMP.keys);
  const row = (
    await driver.query(`SELECT count(*) AS keys, count(*) FILTER (WHERE ${q(SLOW)}) AS slow, count(*) FILTER (WHERE NOT ${q(SIMPLE)}) AS walked FROM ${q(TMP.keys)}`)
  )[0]!;
  return { keys: Number(row.keys), slow: Number(row.slow), walked: Number(row.walked) };
}
