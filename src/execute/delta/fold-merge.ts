import { INTERNAL_COLUMN_PREFIX } from '../../files/source-keys.js';
import { OP, OP_TRUNCATE } from '../../store/target-columns.js';
import type { LogFold } from '../log-rewrites.js';

/**
 * The folded keys' old events out and their folds in as ONE write of the log (Delta, which has no
 * transaction to hold several): each folded key once, matching its old events, which go; each
 * fold with no key to match, which comes in. Truncates stay (keys left unfolded still need them,
 * and on folded keys they change nothing). Every cached relation that read the log is computed
 * again after a write to it (Spark), so one write is also the cheap one.
 */
export function foldMergeSql(fold: LogFold, q: (s: string) => string): string {
  const { log, keys, keysTable, columns, folds, old } = fold;
  const side = q(`${INTERNAL_COLUMN_PREFIX}fold`);
  const keyMatch = keys.map((k) => `l.${k} = s.${k}`).join(' AND ');
  const keysOnly = columns.map((c) => (keys.includes(c) ? `k.${c}` : `NULL AS ${c}`)).join(', ');
  return `MERGE INTO ${log} l USING (
  SELECT ${keysOnly}, false AS ${side} FROM ${keysTable} k
  UNION ALL
  SELECT *, true AS ${side} FROM (${folds.join('\n  UNION ALL\n  ')}) f
) s
ON NOT s.${side} AND ${keyMatch} AND l.${q(OP)} <> ${OP_TRUNCATE} AND l.${old.column} < ${old.below}
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED AND s.${side} THEN INSERT (${columns.join(', ')}) VALUES (${columns.map((c) => `s.${c}`).join(', ')})`;
}
