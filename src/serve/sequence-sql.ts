import type { Dialect } from '../dialects/dialect.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { Flow } from '../flow/flow.js';
import { sentinelValue } from '../store/target-columns.js';

/**
 * A start or end column as the sequence's first part (a tuple sequence [ts_ms, lsn] is placed in
 * time by ts_ms, as `as-of` compares it).
 */
export function firstPart(d: Dialect, model: ColumnModel, column: string, alias = ''): string {
  const col = `${alias}${d.quote(column)}`;
  return model.seq.length === 1 ? col : `(${col}).${d.quote(model.seq[0]!.name)}`;
}

/** The SQL type a time given for the first part is cast to. */
export function firstPartType(model: ColumnModel): string {
  return model.seq[0]!.type;
}

/** Whether a row's end is open: null, or the flow's end sentinel. */
export function openEnd(flow: Flow, model: ColumnModel, d: Dialect, alias = ''): string {
  const end = `${alias}${d.quote(flow.endAtColumn)}`;
  return flow.endSentinel === undefined ? `${end} IS NULL` : `(${end} IS NULL OR ${end} = ${sentinelValue(flow, model, d)})`;
}
