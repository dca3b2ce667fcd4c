import { ScdError } from '../../errors.js';
import { settleDebezium } from '../../flow/debezium-positions.js';
import type { Flow } from '../../flow/flow.js';
import { storeNames, TMP } from '../../store/names.js';
import { sourceColumnsOf, stagingColumnsOf, typeStagedColumns } from '../../typing/staged-types.js';
import { evolveModel } from '../evolve.js';
import { checkExpressions } from '../expression.js';
import { type ColumnModel, deriveModel } from '../model.js';
import { checkColumnNames } from '../name-clashes.js';
import { changedSettings, rebuildNeeded, semanticSettings } from '../settings.js';
import { checkEndSentinel, checkInclusiveEnd, currentViewSql } from '../target.js';
import type { BatchModel, CommitContext, StagedInput, TargetFound } from './commit-state.js';

/**
 * The types the staged values are read as (declared, stored, or what the good values say) and the
 * target's model: derived for a new target, the stored one evolved by new columns otherwise (a
 * changed semantic setting needs a rebuild). Then every check that refuses a flow before anything
 * is created: its expressions, its names, the end sentinel, an inclusive end.
 */
export async function modelBatch(ctx: CommitContext, given: Flow, input: StagedInput, target: TargetFound): Promise<BatchModel> {
  const { driver } = ctx;
  const d = driver.dialect;
  const { record, stagedRows } = target;
  // A Debezium flow's sequence follows from its target's source columns: the stored ones once it exists.
  const flow = settleDebezium(
    given,
    (record?.model.source ?? sourceColumnsOf(input.stagedTable)).map((c) => c.name),
  );
  const settings = semanticSettings(flow);
  const at = new Date().toISOString();
  const typing = stagedRows > 0 ? await typeStagedColumns(driver, flow, TMP.stage, input.stagedTable, input.lexical, record?.model.source) : undefined;
  const staged = typing ? [...typing.columns, ...stagingColumnsOf(input.stagedTable)] : input.stagedTable;
  const stagedAs = typing?.staged ?? new Map();
  let model: ColumnModel;
  if (!record) {
    if (stagedRows === 0)
      throw new ScdError('NOT_APPLIED', 'the input has no readable rows, so the target cannot be created yet', {
        file: flow.origin,
        fix: 'apply a file with at least one valid record',
      });
    model = deriveModel(flow, staged);
  } else {
    const changed = changedSettings(record.settings, settings);
    if (changed.length) throw rebuildNeeded(flow, changed);
    const names = storeNames(flow.target);
    model = stagedRows > 0 ? await evolveModel(driver, flow, record, staged, stagedAs, names, at) : record.model;
    if (target.recordRestored) await driver.run(currentViewSql(flow, model, d, names));
  }
  // Before any statement holds a flow expression (also for an empty input: the batch holds them).
  await checkExpressions(driver, flow, model.source);
  // Names and values the engine would refuse halfway: refused before anything is created.
  checkColumnNames(flow, model, d);
  await checkEndSentinel(driver, flow, model);
  checkInclusiveEnd(flow, model, d);
  return { flow, settings, at, model, staged, stagedAs };
}
