import type { Dialect } from '../../dialects/dialect.js';

/**
 * A MERGE source of at most this many values (rows × columns) is sent whole to the join with its
 * table (Dialect.sentWhole): the table is then read where it lies instead of shuffled to meet the
 * source. Above it, the engine's own choice: a large source sent whole would fill the driver's
 * memory (docs/decisions/0090-a-small-merge-source-is-sent-whole.md).
 */
export const SENT_WHOLE_VALUES = 5_000_000;

/** The source as the MERGE reads it: sent whole where the dialect can and it is small. */
export function mergeSource(d: Dialect, select: string, values: number): string {
  return d.sentWhole && values <= SENT_WHOLE_VALUES ? d.sentWhole(select) : select;
}
