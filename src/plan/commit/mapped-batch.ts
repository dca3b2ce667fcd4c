import type { ColumnInfo } from '../../dialects/driver.js';
import { type StoreNames, storeNames, TMP } from '../../store/names.js';
import type { StagedColumn } from '../../typing/cast.js';
import { sourceColumnsOf } from '../../typing/staged-types.js';
import { orderByFirstApplied } from '../first-applied-order.js';
import { type ColumnModel, deriveModel } from '../model.js';
import { checkNewTarget } from '../name-clashes.js';
import { mapBatch } from '../record-failures.js';
import { createStoreSql } from '../target.js';
import type { BatchModel, CommitContext, MappedBatch, StagedInput, TargetFound } from './commit-state.js';

/**
 * The batch mapped to events (TMP.batch), with the target there to read: a new target is created
 * first, unless its columns take their order from its first applied record (JSON records each
 * order their own keys: spec.recordKeys), which only the mapped batch tells; a snapshot adjusts
 * the staged rows first (spec.prepare: implied deletes, unchanged rows dropped).
 */
export async function mapToEvents(ctx: CommitContext, input: StagedInput, target: TargetFound, batch: BatchModel): Promise<MappedBatch> {
  const { driver, spec } = ctx;
  const { flow, stagedAs } = batch;
  const { record } = target;
  let model = batch.model;
  let names = storeNames(flow.target);
  const orderedByFirstRecord = !record && !spec.prepare && !!spec.recordKeys;
  const createAndPin = async () => {
    if (!record) await createTarget(ctx, batch, model, target.version);
    // Begin's versions of the tables serve where no write came after it (a commit that changed the
    // target's columns, or created them, wrote them).
    names = await ctx.executor.pinReads(driver, names, model === record?.model ? target.latest : undefined);
  };
  if (!orderedByFirstRecord) await createAndPin();
  let stagedRows = target.stagedRows;
  let unchanged = 0;
  if (spec.prepare) {
    const prepared = await spec.prepare(driver, model, names, !!record, stagedAs);
    stagedRows += prepared.implied - prepared.unchanged;
    unchanged = prepared.unchanged;
  }
  const rowsRead = stagedRows + target.rejected + unchanged + input.skipped;
  ctx.progress(`mapping ${stagedRows} records to events`);
  // An empty input has no columns worth reading: every model column is then null.
  const stagedNow =
    stagedRows > 0 || spec.prepare ? stagedColumnsNow(spec.prepare ? await driver.columns(TMP.stage) : input.stagedTable, stagedAs) : new Map<string, StagedColumn>();
  await mapBatch(driver, flow, model, stagedNow, record?.compactedBefore);
  if (orderedByFirstRecord) {
    const ordered = await orderByFirstApplied(driver, spec.recordKeys!, batch.staged);
    if (ordered) {
      model = deriveModel(flow, ordered);
      await driver.dropTemporary([TMP.batch]);
      await mapBatch(driver, flow, model, stagedNow);
    }
    await createAndPin();
  }
  return { model, names, stagedRows, unchanged, rowsRead };
}

/** A new target's tables and its flow record. */
async function createTarget(ctx: CommitContext, batch: BatchModel, model: ColumnModel, version: number): Promise<void> {
  const { driver, executor } = ctx;
  const names: StoreNames = storeNames(batch.flow.target);
  await executor.beforeCreate(driver, names, version);
  await checkNewTarget(driver, batch.flow, names);
  // Each step's tables at once where the executor writes so (each a round trip of its own on Spark).
  for (const step of createStoreSql(batch.flow, model, driver.dialect, names))
    await executor.runWrites(
      driver,
      step.map((sql) => [sql]),
    );
  await executor.writeFlowRecord(driver, names, { model, settings: batch.settings }, batch.at);
}

/** How each source column of the staged table is held now (a snapshot's prepare may add columns). */
function stagedColumnsNow(columns: ColumnInfo[] | undefined, known: ReadonlyMap<string, StagedColumn>): Map<string, StagedColumn> {
  const out = new Map<string, StagedColumn>();
  for (const c of sourceColumnsOf(columns ?? [])) out.set(c.name, known.get(c.name) ?? { type: c.type });
  return out;
}
