import { requireCapability } from '../dialects/capabilities.js';
import { sqlString } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import type { FlowRecord } from './catalog.js';
import { commitVersions } from './engine-versions.js';
import type { StoreNames } from './names.js';

/**
 * The change feed's storage (docs/DESIGN.md "change feed"). SEMANTICS §5 gives the feed Delta Lake's
 * schema: a version that only closes (its end, and its is-current flag, change; half of an in-order
 * batch's changes) is an update_preimage and an update_postimage that differ in those columns
 * alone. It is stored as one row, `_change_type = 'close'`: the post-image, with the pre-image's
 * end and is-current flag in PRE_END / PRE_CURRENT. Readers see the two images (feedSql). The end
 * column never changes type (a rebuild refuses it), so PRE_END keeps its type; a renamed end or
 * is-current column is read under its new name, and a feed written before these columns existed
 * (or of a target that was scd1) gets them on its next write.
 *
 * A row a commit adds to the target (an insert, a close, an update's post-image) is stored **by
 * reference** (BY_REFERENCE = true): its identity and the columns a close changes (end,
 * is-current), and null in every other column. Those other columns do not change while the row is
 * in the target (a close updates only the end and is-current in place; any other change removes
 * the row and adds another), and every removal is itself a feed row with the removed row's values in full (an
 * update_preimage or a delete). So a reference written at commit c reads its values from the first
 * removal of its identity after c, or, if there is none, from the target. Writing the feed then
 * costs a few narrow columns per added row instead of a second copy of it.
 */
export const CLOSE_TYPE = 'close';
export const PRE_END = '__scd_pre_end';
export const PRE_CURRENT = '__scd_pre_current';
export const BY_REFERENCE = '__scd_ref';
/** The columns Delta Lake's change data feed adds to the target's. */
export const CDF_COLUMNS = ['_change_type', '_commit_version', '_commit_timestamp'];
/** The feed rows that hold a removed row's values in full. */
const REMOVALS = `('update_preimage', 'delete')`;

/** The columns a close row needs, for an scd2 target whose end column has type `endType`. */
export function preColumns(endType: string, boolType: string): ColumnInfo[] {
  return [
    { name: PRE_END, type: endType },
    { name: PRE_CURRENT, type: boolType },
  ];
}

/**
 * The feed's own columns beyond the target's and Delta Lake's: the close columns (scd2),
 * BY_REFERENCE.
 */
export function feedColumns(flow: Flow, target: ColumnInfo[], boolType: string): ColumnInfo[] {
  const end = target.find((c) => c.name === flow.endAtColumn);
  return [...(flow.storedAs === 'scd2' && end ? preColumns(end.type, boolType) : []), { name: BY_REFERENCE, type: boolType }];
}

/** Every column feedColumns may give: which of them a feed has is all ensureFeedColumns needs to know. */
export const FEED_OWN_COLUMNS = [PRE_END, PRE_CURRENT, BY_REFERENCE];

/**
 * The feed gets the columns it lacks (a feed written before they existed). `has`: which of
 * FEED_OWN_COLUMNS the feed has, where the caller read it (in the same transaction); otherwise
 * they are looked up.
 */
export async function ensureFeedColumns(driver: Driver, flow: Flow, names: StoreNames, target: ColumnInfo[], has?: ReadonlySet<string>): Promise<void> {
  const feed = has ?? new Set(((await driver.columns(names.changes)) ?? []).map((f) => f.name));
  const q = driver.dialect.quote;
  for (const c of feedColumns(flow, target, driver.dialect.types.bool))
    if (!feed.has(c.name)) await driver.run(`ALTER TABLE ${q(names.changes)} ADD COLUMN ${q(c.name)} ${c.type}`);
}

/**
 * How a feed is read: the target columns to show, the identity a reference is resolved by (keys,
 * plus the start for scd2), and the columns a close changes (a reference keeps them itself).
 */
export interface FeedShape {
  cols: string[];
  id: string[];
  endAt: string;
  isCurrent: string | undefined;
  /** The current flag's values as text, current first (flow.isCurrentValues); undefined: a boolean. */
  currentValues?: [string, string];
}

/**
 * The columns a reference keeps itself (the writer fills them, the reader takes them from it):
 * the identity, and the columns a close changes (`closing`: end and is-current, for scd2).
 */
export function keptByReference(id: string[], closing: Array<string | undefined>): Set<string> {
  return new Set([...id, ...closing.filter((c): c is string => c !== undefined)]);
}

/** The stored rows, each with its values (a reference resolved), in the feed's stored shape. */
function storedSql(q: (s: string) => string, names: StoreNames, shape: FeedShape, extra: string[], hasRef: boolean): string {
  const plain = `SELECT ${[...shape.cols, ...CDF_COLUMNS, ...extra].map(q).join(', ')} FROM ${q(names.changes)}`;
  return hasRef ? `${plain} WHERE ${q(BY_REFERENCE)} IS NULL\n    UNION ALL\n    ${resolvedSql(q, names, shape, extra)}` : plain;
}

/** The references, each with the values it stands for. */
function resolvedSql(q: (s: string) => string, names: StoreNames, shape: FeedShape, extra: string[]): string {
  const kept = keptByReference(shape.id, [shape.endAt, shape.isCurrent]);
  const on = (a: string, b: string) => shape.id.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`).join(' AND ');
  const removal = (a: string) => `${a}.${q(BY_REFERENCE)} IS NULL AND ${a}._change_type IN ${REMOVALS}`;
  const rid = shape.id.map((c) => `r.${q(c)}`).join(', ');
  // The first removal of each reference's identity after its commit.
  const next = `SELECT ${rid}, r._commit_version AS v, min(g._commit_version) AS gv
      FROM ${q(names.changes)} r JOIN ${q(names.changes)} g ON ${on('g', 'r')} AND g._commit_version > r._commit_version
      WHERE r.${q(BY_REFERENCE)} AND ${removal('g')} GROUP BY ${rid}, r._commit_version`;
  const value = (c: string) => (kept.has(c) ? `r.${q(c)}` : `CASE WHEN m.gv IS NULL THEN t.${q(c)} ELSE g.${q(c)} END AS ${q(c)}`);
  return `SELECT ${[...shape.cols.map(value), ...[...CDF_COLUMNS, ...extra].map((c) => `r.${q(c)}`)].join(', ')}
    FROM ${q(names.changes)} r
    LEFT JOIN (${next}) m ON ${on('m', 'r')} AND m.v = r._commit_version
    LEFT JOIN ${q(names.changes)} g ON ${on('g', 'r')} AND g._commit_version = m.gv AND ${removal('g')}
    LEFT JOIN ${q(names.target)} t ON ${on('t', 'r')}
    WHERE r.${q(BY_REFERENCE)}`;
}

/**
 * The feed as readers see it (a FROM item): every stored row with its values, a close as its two
 * images.
 */
export async function feedSql(driver: Driver, names: StoreNames, shape: FeedShape): Promise<string> {
  if (driver.dialect.capabilities.changeFeed) return engineFeedSql(driver, names, shape);
  const q = driver.dialect.quote;
  const feed = (await driver.columns(names.changes)) ?? [];
  const hasPre = feed.some((c) => c.name === PRE_END);
  const hasRef = feed.some((c) => c.name === BY_REFERENCE);
  const stored = storedSql(q, names, shape, hasPre ? [PRE_END, PRE_CURRENT] : [], hasRef);
  if (!hasPre) return `(${stored}) feed`;
  const { cols, endAt, isCurrent, currentValues } = shape;
  // PRE_CURRENT holds whether the pre-image was current (a boolean): shown as the flag's own values.
  const text = (v: string) => `'${v.replace(/'/g, "''")}'`;
  const preCurrent = currentValues
    ? `CASE WHEN s.${q(PRE_CURRENT)} THEN ${text(currentValues[0])} WHEN NOT s.${q(PRE_CURRENT)} THEN ${text(currentValues[1])} END`
    : `s.${q(PRE_CURRENT)}`;
  // A close is read twice (k.pre: its pre-image, then its post-image), every other row once; one
  // read of the stored rows, so that a reader's filter on the commit reaches them.
  const image = (c: string) =>
    c === endAt
      ? `CASE WHEN k.pre THEN s.${q(PRE_END)} ELSE s.${q(c)} END AS ${q(c)}`
      : c === isCurrent
        ? `CASE WHEN k.pre THEN ${preCurrent} ELSE s.${q(c)} END AS ${q(c)}`
        : `s.${q(c)}`;
  const type = `CASE WHEN s._change_type <> '${CLOSE_TYPE}' THEN s._change_type WHEN k.pre THEN 'update_preimage' ELSE 'update_postimage' END AS _change_type`;
  return `(SELECT ${[...cols.map(image), type, 's._commit_version', 's._commit_timestamp'].join(', ')}
    FROM (${stored}) s, (VALUES (false), (true)) k(pre) WHERE NOT k.pre OR s._change_type = '${CLOSE_TYPE}') feed`;
}

/**
 * The feed the engine recorded itself (Delta's change data feed), in scdkit's terms: each change
 * of a standing version a commit wrote (store/engine-versions.ts), numbered by that commit and
 * stamped with its time, so that it reads like scdkit's own feed on every engine.
 */
async function engineFeedSql(driver: Driver, names: StoreNames, shape: FeedShape): Promise<string> {
  const d = driver.dialect;
  const q = d.quote;
  requireCapability(d, 'tableChanges', 'the change feed the engine records (capabilities.changeFeed)');
  const versions = await commitVersions(driver, names);
  const cols = shape.cols.map((c) => `c.${q(c)}`).join(', ');
  if (!versions.length)
    return `(SELECT ${cols}, CAST(NULL AS ${d.types.text}) AS _change_type, CAST(NULL AS ${d.types.int}) AS _commit_version,
      CAST(NULL AS ${d.types.timestamptz}) AS _commit_timestamp FROM ${q(names.target)} c WHERE 1 = 0) feed`;
  const lo = Math.min(...versions.map((v) => v.engineVersion));
  const hi = Math.max(...versions.map((v) => v.engineVersion));
  const map = versions.map((v) => `(${v.engineVersion}, ${v.commit})`).join(', ');
  return `(SELECT ${cols}, c._change_type, m.version AS _commit_version, k.committed_at AS _commit_timestamp
    FROM ${d.tableChanges(names.target, lo, hi)} c
    JOIN (VALUES ${map}) AS m(engine_version, version) ON c._commit_version = m.engine_version
    JOIN ${q(names.commits)} k ON k.target = ${sqlString(names.target) /* a plain name (flow schema): no quote to escape */} AND k.version = m.version) feed`;
}

/**
 * Every reference becomes a row with its values in full (before a rebuild changes the target's
 * columns or identity, by which references are resolved). `shape` is the feed as it was written.
 */
export async function materializeFeed(driver: Driver, names: StoreNames, shape: FeedShape, tmp: string): Promise<void> {
  const q = driver.dialect.quote;
  const feed = (await driver.columns(names.changes)) ?? [];
  if (!feed.some((c) => c.name === BY_REFERENCE)) return;
  const extra = [PRE_END, PRE_CURRENT].filter((c) => feed.some((f) => f.name === c));
  const list = [...shape.cols, ...CDF_COLUMNS, ...extra].map(q).join(', ');
  await driver.run(`DROP TABLE IF EXISTS ${q(tmp)}`);
  await driver.run(driver.dialect.scratch(tmp, `${resolvedSql(q, names, shape, extra)}`));
  await driver.run(`DELETE FROM ${q(names.changes)} WHERE ${q(BY_REFERENCE)}`);
  await driver.run(`INSERT INTO ${q(names.changes)} (${list}) SELECT ${list} FROM ${q(tmp)}`);
  await driver.run(`DROP TABLE ${q(tmp)}`);
}

/**
 * The shape a feed was written under: the stored flow's identity and close columns (a flow file
 * changed since, and not yet rebuilt, does not change how its references resolve).
 */
export function writtenShape(record: FlowRecord, cols: string[]): FeedShape {
  const s = record.settings;
  const scd2 = s.storedAs === 'scd2';
  return {
    cols,
    id: [...record.model.keys.map((k) => k.name), ...(scd2 ? [String(s.startAtColumn)] : [])],
    endAt: String(s.endAtColumn),
    isCurrent: scd2 && typeof s.isCurrentColumn === 'string' ? s.isCurrentColumn : undefined,
    currentValues: scd2 && Array.isArray(s.isCurrentValues) ? (s.isCurrentValues as [string, string]) : undefined,
  };
}
