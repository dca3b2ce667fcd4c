import { INTERNAL_COLUMN_PREFIX } from '../../files/source-keys.js';
import type { StateChange } from '../state-change.js';

/**
 * The key state of the recomputed keys as one MERGE: a key's new row replaces its old one; a key
 * without a new row loses its row.
 */
export function stateMergeSql(q: (s: string) => string, change: StateChange, source: (select: string) => string): string {
  const { state, keys, columns, recomputed, rows } = change;
  const has = q(`${INTERNAL_COLUMN_PREFIX}has`);
  const r = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}r${i}`);
  const rest = columns.filter((c) => !keys.includes(c));
  return `MERGE INTO ${state} t USING ${source(`(
  SELECT ${keys.map((k) => `k.${q(k)}`).join(', ')}, ${rest.map((c, i) => `n.${r(i)} AS ${q(c)}`).join(', ')}, n.${r(0)} IS NOT NULL OR n.${r(rest.length - 1)} IS NOT NULL AS ${has}
  FROM (SELECT DISTINCT ${keys.map(q).join(', ')} FROM ${recomputed}) k
  LEFT JOIN (SELECT ${columns.map((_, i) => (i < keys.length ? `x${i}` : `x${i} AS ${r(i - keys.length)}`)).join(', ')} FROM (${rows}) AS x(${columns.map((_, i) => `x${i}`).join(', ')})) n
    ON ${keys.map((k, i) => `n.x${i} = k.${q(k)}`).join(' AND ')})`)} s
ON ${keys.map((k) => `t.${q(k)} = s.${q(k)}`).join(' AND ')}
WHEN MATCHED AND NOT s.${has} THEN DELETE
WHEN MATCHED THEN UPDATE SET ${rest.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}
WHEN NOT MATCHED AND s.${has} THEN INSERT (${columns.map(q).join(', ')}) VALUES (${columns.map((c) => `s.${q(c)}`).join(', ')})`;
}
