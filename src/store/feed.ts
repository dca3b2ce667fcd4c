import type { ColumnInfo, Driver } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import type { StoreNames } from './names.js';

/**
 * The change feed's storage (docs/DESIGN.md "change feed"). SPEC §5 gives the feed Delta Lake's
 * schema: a version that only closes (its end, and its is-current flag, change; half of an in-order
 * batch's changes) is an update_preimage and an update_postimage that differ in those columns
 * alone. It is stored as one row, `_change_type = 'close'`: the post-image, with the pre-image's
 * end and is-current flag in PRE_END / PRE_CURRENT. Readers see the two images (feedSql). The end
 * column never changes type (a rebuild refuses it), so PRE_END keeps its type; a renamed end or
 * is-current column is read under its new name, and a feed written before these columns existed
 * (or of a target that was scd1) gets them on its next write.
 */
export const CLOSE_TYPE = 'close';
export const PRE_END = '__scd_pre_end';
export const PRE_CURRENT = '__scd_pre_current';
/** The columns Delta Lake's change data feed adds to the target's. */
export const CDF_COLUMNS = ['_change_type', '_commit_version', '_commit_timestamp'];

/** The columns a close row needs, for an scd2 target whose end column has type `endType`. */
export function preColumns(endType: string, boolType: string): ColumnInfo[] {
  return [
    { name: PRE_END, type: endType },
    { name: PRE_CURRENT, type: boolType },
  ];
}

/** The feed of an scd2 target gets the close columns (a feed written before they existed too). */
export async function ensurePreColumns(driver: Driver, flow: Flow, names: StoreNames, target: ColumnInfo[]): Promise<void> {
  if (flow.storedAs !== 'scd2') return;
  const feed = (await driver.columns(names.changes)) ?? [];
  if (feed.some((c) => c.name === PRE_END)) return;
  const end = target.find((c) => c.name === flow.endAtColumn);
  if (!end) return;
  const q = driver.dialect.quote;
  for (const c of preColumns(end.type, driver.dialect.types.bool)) await driver.run(`ALTER TABLE ${q(names.changes)} ADD COLUMN ${q(c.name)} ${c.type}`);
}

/**
 * The feed as readers see it (a FROM item): every stored row, a close as its two images. `cols` are
 * the target columns to show; `endAt` / `isCurrent` the flow's columns a close changes.
 */
export async function feedSql(driver: Driver, names: StoreNames, cols: string[], endAt: string, isCurrent: string | undefined): Promise<string> {
  const q = driver.dialect.quote;
  const feed = (await driver.columns(names.changes)) ?? [];
  if (!feed.some((c) => c.name === PRE_END)) return `(SELECT ${[...cols, ...CDF_COLUMNS].map(q).join(', ')} FROM ${q(names.changes)}) feed`;
  const post = cols.map(q);
  const pre = cols.map((c) => (c === endAt ? `${q(PRE_END)} AS ${q(c)}` : c === isCurrent ? `${q(PRE_CURRENT)} AS ${q(c)}` : q(c)));
  const tail = (type: string) => `${type}, _commit_version, _commit_timestamp FROM ${q(names.changes)}`;
  return `(SELECT ${post.join(', ')}, ${tail(`_change_type`)} WHERE _change_type <> '${CLOSE_TYPE}'
    UNION ALL SELECT ${pre.join(', ')}, ${tail(`'update_preimage' AS _change_type`)} WHERE _change_type = '${CLOSE_TYPE}'
    UNION ALL SELECT ${post.join(', ')}, ${tail(`'update_postimage' AS _change_type`)} WHERE _change_type = '${CLOSE_TYPE}') feed`;
}
