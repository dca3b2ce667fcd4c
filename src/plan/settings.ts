import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { settleDebezium } from '../flow/debezium-positions.js';
import { type Flow, PROCESSING_TIME_COLUMN } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import type { StoreNames } from '../store/names.js';

/** The flow fields that decide what the target holds; a change to any needs a rebuild. */
export function semanticSettings(flow: Flow): Record<string, unknown> {
  return {
    storedAs: flow.storedAs,
    keys: flow.keys,
    sequenceBy: flow.sequenceBy,
    applyAsDeletes: flow.applyAsDeletes ?? null,
    applyAsTruncates: flow.applyAsTruncates ?? null,
    columns: flow.columns ?? null,
    exceptColumns: flow.exceptColumns ?? null,
    trackHistory: flow.trackHistory ?? null,
    trackHistoryExcept: flow.trackHistoryExcept ?? null,
    ignoreNullUpdates: flow.ignoreNullUpdates,
    previousValues: flow.previousValues ?? null,
    // A commit's time in _processed_at is `true` (as targets made before the grain and column
    // options stored it); a date, or a source column, is stored as such.
    processingTime: !flow.processingTime
      ? null
      : flow.processingGrain === 'timestamp' && flow.processingColumn === PROCESSING_TIME_COLUMN
        ? true
        : { grain: flow.processingGrain, column: flow.processingColumn },
    startAtColumn: flow.startAtColumn,
    endAtColumn: flow.endAtColumn,
    endSentinel: flow.endSentinel ?? null,
    isCurrentColumn: flow.isCurrentColumn ?? null,
    // Stored only when set: a target made before the option has no such setting.
    ...(flow.isCurrentValues ? { isCurrentValues: flow.isCurrentValues } : {}),
    ...(flow.endInclusive ? { endInclusive: true } : {}),
    surrogateKey: flow.surrogateKey ?? null,
    deletes: flow.deletes,
    deletedColumn: flow.deletedColumn,
  };
}

/** Names of the settings that differ. */
export function changedSettings(stored: Record<string, unknown>, now: Record<string, unknown>): string[] {
  return Object.keys(now).filter((k) => JSON.stringify(stored[k] ?? null) !== JSON.stringify(now[k] ?? null));
}

/** The refusal of a commit under a flow whose target-deciding settings changed since the target was built. */
export function rebuildNeeded(flow: Flow, changed: string[]): ScdError {
  return new ScdError('FLOW_INVALID', `the flow changed (${changed.join(', ')}) since the target was built, and this needs a rebuild`, {
    file: flow.origin,
    field: changed[0],
    fix: `restore the previous setting, or run \`scd rebuild ${flow.origin}\` to recompute all history under it`,
  });
}

/**
 * Before an apply looks for new records: a flow changed in a way that needs a rebuild is told at
 * once, whether or not anything new is pending (the commit itself refuses it as well).
 */
export async function checkFlowUnchanged(driver: Driver, flow: Flow, names: StoreNames): Promise<void> {
  const record = await readFlowRecord(driver, names);
  if (!record) return;
  // A Debezium flow's sequence follows from its target's stored source columns (as in the commit).
  const settled = settleDebezium(
    flow,
    record.model.source.map((c) => c.name),
  );
  const changed = changedSettings(record.settings, semanticSettings(settled));
  if (changed.length) throw rebuildNeeded(flow, changed);
}
