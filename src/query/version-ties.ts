import type { Dialect } from '../dialects/dialect.js';
import type { ColumnInfo } from '../dialects/driver.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { Flow } from '../flow/flow.js';
import { storeNames } from '../store/names.js';

/** The column of `scd show` that marks tied versions: how many of the key's logged events tied in the version's span. */
export const TIES_COLUMN = '_ties';

/**
 * One key's versions (`versions`: a subquery of its rows, every column of `columns`), each with
 * `_ties`: the number of the key's logged events that share their sequence with another,
 * different event of the key (a tie, SEMANTICS §3) and fall in the version's span, 0 when none.
 *
 * A version's span runs from its start up to the next version's start; the first version's has no
 * lower bound and the last's no upper one. So each tie is counted on exactly one version: the one
 * whose values it decided (an upsert's tie opens or changes it), or the last, whose end a tied
 * delete set. A tuple sequence is compared part by part from the left, as it is ordered. An scd1
 * target's one row counts every tie of its key. Events folded by `compact` are no longer logged:
 * their ties are not counted.
 *
 * The key's values are the parameters `$1..$n`, in the order of `model.keys`.
 */
export function versionTiesSql(d: Dialect, flow: Flow, model: ColumnModel, versions: string, columns: ColumnInfo[], orderBy: string): string {
  const q = d.quote;
  const own = (name: string) => q(`${INTERNAL_COLUMN_PREFIX}${name}`);
  const list = columns.map((c) => q(c.name));
  const seq = model.seq.map((c) => c.name);
  const scd2 = flow.storedAs === 'scd2';
  // A bound's part: the start column itself, or its field of a tuple sequence.
  const boundPart = (bound: string, i: number) => (seq.length === 1 ? bound : `(${bound}).${q(seq[i]!)}`);
  /** The tie group's sequence is at or after (`>`: after) the bound, compared part by part from the left. */
  const compare = (bound: string, last: '>=' | '<', i = 0): string => {
    const tie = `g.${q(seq[i]!)}`;
    const part = boundPart(bound, i);
    if (i === seq.length - 1) return `${tie} ${last} ${part}`;
    const strict = last === '>=' ? '>' : '<';
    return `(${tie} ${strict} ${part} OR (${tie} = ${part} AND ${compare(bound, last, i + 1)}))`;
  };
  const keyMatch = model.keys.map((k, i) => `${q(k.name)} = CAST($${i + 1} AS ${k.type})`).join(' AND ');
  const events = q(storeNames(flow.target).events);
  const groups = `(SELECT ${seq.map(q).join(', ')}, count(*) AS ${own('n')} FROM ${events} WHERE ${keyMatch} GROUP BY ${seq.map(q).join(', ')} HAVING count(*) > 1)`;
  const lo = own('lo');
  const hi = own('hi');
  const bounds = scd2
    ? `CASE WHEN row_number() OVER (ORDER BY ${orderBy}) = 1 THEN NULL ELSE ${q(flow.startAtColumn)} END AS ${lo}, lead(${q(flow.startAtColumn)}) OVER (ORDER BY ${orderBy}) AS ${hi}`
    : `CAST(NULL AS ${d.types.int}) AS ${lo}, CAST(NULL AS ${d.types.int}) AS ${hi}`;
  const within = scd2 ? `(v.${lo} IS NULL OR ${compare(`v.${lo}`, '>=')}) AND (v.${hi} IS NULL OR ${compare(`v.${hi}`, '<')})` : '1 = 1';
  const vid = own('v');
  const spans = `(SELECT ${list.join(', ')}, row_number() OVER (ORDER BY ${orderBy}) AS ${vid}, ${bounds} FROM ${versions})`;
  const counted = `(SELECT v.${vid}, sum(g.${own('n')}) AS ${own('t')} FROM ${spans} v JOIN ${groups} g ON ${within} GROUP BY v.${vid})`;
  return `(SELECT ${list.map((c) => `v.${c}`).join(', ')}, CAST(coalesce(t.${own('t')}, 0) AS ${d.types.int}) AS ${q(TIES_COLUMN)}
    FROM ${spans} v LEFT JOIN ${counted} t ON v.${vid} = t.${vid}) kt`;
}
