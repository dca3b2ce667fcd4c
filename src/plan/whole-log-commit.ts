import { ScdError } from '../errors.js';
import type { Driver } from '../dialects/driver.js';

/**
 * `scd rebuild` and `scd compact` rewrite the event log, the key state and the target in several
 * writes. In a transaction they are whole or nothing; on an engine without transactions (Spark +
 * Delta) their interruption could not yet be undone by the next commit (store/recovery.ts finds an
 * apply's writes, not theirs), so they are refused there before anything is read or written.
 */
export function refuseWithoutTransactions(driver: Driver, command: 'rebuild' | 'compact'): void {
  if (driver.dialect.capabilities.transactions) return;
  throw new ScdError('USAGE', `scd ${command} is not available on ${driver.dialect.name} yet: it rewrites the event log in several writes, which ${driver.dialect.name} cannot undo together if interrupted`, {
    fix:
      command === 'rebuild'
        ? 'to recompute the history under a changed flow, apply its inputs again to a new target (a new `target` name), or restore the previous flow setting'
        : 'leave the events as they are (compaction only saves space)',
  });
}
