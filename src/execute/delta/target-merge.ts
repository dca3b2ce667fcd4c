import { INTERNAL_COLUMN_PREFIX } from '../../files/source-keys.js';
import type { TargetChange } from '../target-change.js';

/**
 * The change as one MERGE by identity: a removed row alone is deleted, an added row alone
 * inserted; a pair is a close (only the closing columns change) or an update of every other column.
 */
export function mergeByIdentity(q: (s: string) => string, change: TargetChange, source: (select: string) => string = (select) => select): string {
  const { target: T, columns: cols, identity: id, closing, removed, added, flags } = change;
  const m = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}m${i}`);
  const action = q(`${INTERNAL_COLUMN_PREFIX}action`);
  const others = cols.filter((c) => !id.includes(c));
  return `MERGE INTO ${T} t USING ${source(`(
  SELECT ${id.map((c, i) => `coalesce(a.${q(c)}, r.${q(c)}) AS ${m(i)}`).join(', ')}, ${cols.map((c) => `a.${q(c)} AS ${q(c)}`).join(', ')},
    CASE WHEN a.${q(id[0]!)} IS NULL THEN 'delete' WHEN a.${q(flags.close)} THEN 'close' WHEN r.${q(id[0]!)} IS NULL THEN 'insert' ELSE 'update' END AS ${action}
  FROM ${added} a FULL JOIN ${removed} r ON ${id.map((c) => `a.${q(c)} = r.${q(c)}`).join(' AND ')})`)} s
ON ${id.map((c, i) => `t.${q(c)} = s.${m(i)}`).join(' AND ')}
WHEN MATCHED AND s.${action} = 'delete' THEN DELETE${
    closing.length
      ? `
WHEN MATCHED AND s.${action} = 'close' THEN UPDATE SET ${closing.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}`
      : ''
  }${
    others.length
      ? `
WHEN MATCHED AND s.${action} = 'update' THEN UPDATE SET ${others.map((c) => `${q(c)} = s.${q(c)}`).join(', ')}`
      : ''
  }
WHEN NOT MATCHED AND s.${action} = 'insert' THEN INSERT (${cols.map(q).join(', ')}) VALUES (${cols.map((c) => `s.${q(c)}`).join(', ')})`;
}
