import { ScdError } from '../errors.js';
import type { Driver } from '../dialects/driver.js';

/**
 * `scd compact` rewrites the event log and moves the flow record's watermark. In a transaction it
 * is whole or nothing; on an engine without transactions (Spark + Delta) it is not yet a labelled
 * commit whose interruption the next commit undoes (store/recovery.ts; `scd rebuild` is one), so
 * it is refused there before anything is read or written.
 */
export function refuseWithoutTransactions(driver: Driver, command: 'compact'): void {
  if (driver.dialect.capabilities.transactions) return;
  throw new ScdError('USAGE', `scd ${command} is not available on ${driver.dialect.name} yet: it rewrites the event log in several writes, which ${driver.dialect.name} cannot undo together if interrupted`, {
    fix: 'leave the events as they are (compaction only saves space)',
  });
}
