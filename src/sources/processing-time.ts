import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { PROCESSING_TIME_COLUMN, type Flow } from '../flow/flow.js';
import { TMP } from '../store/names.js';

/**
 * `sequenceBy: { processingTime: true }` (docs/FLOWS.md "Processing time"): every record a commit
 * stages gets the column PROCESSING_TIME_COLUMN holding one instant, the commit's time, which is
 * then its sequence. The commits of a target stamp increasing times as long as the clock does not
 * go back; records of one key within one commit share their sequence and are ties (SEMANTICS §3).
 */
export async function stampProcessingTime(driver: Driver, flow: Flow, at: Date = new Date()): Promise<void> {
  const q = driver.dialect.quote;
  const staged = (await driver.columns(TMP.stage)) ?? [];
  if (staged.some((c) => c.name.toLowerCase() === PROCESSING_TIME_COLUMN))
    throw new ScdError('SOURCE_INVALID', `the source has a column "${PROCESSING_TIME_COLUMN}", the one a processing-time flow adds`, {
      file: flow.origin,
      field: 'sequenceBy',
      fix: `rename or drop that column in the source, or give sequenceBy a column of the source`,
    });
  // A quoted constant: DuckDB parses a bare non-text DEFAULT in ADD COLUMN as several statements.
  await driver.run(`ALTER TABLE ${q(TMP.stage)} ADD COLUMN ${q(PROCESSING_TIME_COLUMN)} ${driver.dialect.types.timestamptz} DEFAULT '${at.toISOString()}'`);
}
