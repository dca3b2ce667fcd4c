import type { Driver } from '../../dialects/driver.js';
import { changesQuery, keyHistoryQuery } from '../../query/history.js';
import { type RowQuery, readRows, selectOf } from '../../query/output.js';
import { TIES_COLUMN } from '../../query/version-ties.js';
import { CLOSE_TYPE } from '../../store/feed.js';
import { storeNames } from '../../store/names.js';
import type { PageContext, PageResult } from '../context.js';
import { valueText } from '../format.js';
import { type Html, href, html } from '../html.js';
import { narrow, type Page, pageNumber, pager, readPage } from '../paging.js';
import { rowsTable } from '../rows-table.js';
import { openEnd } from '../sequence-sql.js';
import { hasGaps, labelsBars, type TimelineVersion, timelineSvg } from '../timeline.js';

const CHANGED = '_changed';
const OPEN = '_open';

/**
 * `/key?<key column>=<value>[&…]`: one key's versions, oldest first, as a timeline and a table of
 * their values (what changed from the previous version marked), with the commit that made each.
 * With a key column missing or no such key: the keys whose text starts with what was given.
 */
export async function keyPage(ctx: PageContext): Promise<PageResult> {
  const { url, keyColumns } = ctx;
  // Every key column named (a key's own link names each part, an empty string too): that key, its
  // parts exactly as given. Otherwise, or when no key is exactly that (a search form's blank
  // field, a part typed with spaces around it): the keys starting with the parts given, trimmed.
  const named = keyColumns.every((k) => url.searchParams.has(k));
  if (named) {
    const exact = Object.fromEntries(keyColumns.map((k) => [k, url.searchParams.get(k)!]));
    const history = await keyVersions(ctx, exact);
    if (history.rows.length) return historyPage(ctx, exact, history);
    if (history.page > 1) {
      const versions = await countRows(ctx.driver, history.query);
      if (versions > 0) return beyondLastPage(ctx, exact, history.page, versions);
    }
  }
  const given = Object.fromEntries(keyColumns.map((k) => [k, url.searchParams.get(k)?.trim() ?? '']));
  const trimmedDiffers = named && keyColumns.some((k) => given[k] !== url.searchParams.get(k));
  const complete = keyColumns.every((k) => given[k] !== '');
  if (complete && trimmedDiffers) {
    const history = await keyVersions(ctx, given);
    if (history.rows.length) return historyPage(ctx, given, history);
  }
  const found = await findKeys(ctx, given);
  const what = keyColumns
    .filter((k) => given[k] !== '')
    .map((k) => `${k} = ${given[k]}`)
    .join(', ');
  return {
    status: complete ? 404 : 200,
    title: 'Find a key',
    body: html`<h1>Find a key</h1>
${complete ? html`<p class="error">${ctx.flow.target} has no version of ${what}.</p>` : ''}
<p>${what ? html`Keys starting with ${what}:` : 'Keys:'}</p>
${rowsTable(found.rows, { columns: keyColumns, keyColumns, empty: 'No key starts with that.' })}
${pager(url, found)}`,
  };
}

/** A page number past the key's last page: say so, with links to its first and last pages. */
function beyondLastPage(ctx: PageContext, key: Record<string, string>, page: number, versions: number): PageResult {
  const what = ctx.keyColumns.map((k) => `${k} = ${key[k]}`).join(', ');
  const last = Math.ceil(versions / ctx.pageSize);
  const link = (n: number) => href('/key', { ...key, page: n > 1 ? n : undefined });
  return {
    status: 404,
    title: what,
    body: html`<h1>${ctx.flow.target}: ${what}</h1>
<p class="error">Page ${page} is beyond the last page of ${what}: ${versions} version${versions === 1 ? '' : 's'}, ${ctx.pageSize} a page, so ${last === 1 ? 'there is only page 1' : `pages 1 to ${last}`}.</p>
<p><a href="${link(1)}">first page</a>${last > 1 ? html` · <a href="${link(last)}">last page (${last})</a>` : ''}</p>`,
  };
}

/** The number of rows a query reads. */
async function countRows(driver: Driver, query: RowQuery): Promise<number> {
  const rows = await driver.query(`SELECT count(*) AS n FROM (${selectOf(driver, query)}) c`, query.params ?? []);
  return Number(rows[0]?.n ?? 0);
}

/** The key's versions (keyHistoryQuery), each marked open-ended or not, one page of them. */
async function keyVersions(ctx: PageContext, key: Record<string, string>): Promise<Page & { query: RowQuery }> {
  const { driver, flow, record } = ctx;
  const d = driver.dialect;
  const base = await keyHistoryQuery(driver, flow, key);
  const open = flow.storedAs === 'scd2' ? openEnd(flow, record.model, d, 'kv.') : 'true';
  const query: RowQuery = {
    columns: [...base.columns, { name: OPEN, type: d.types.int }],
    from: `(SELECT kv.*, CASE WHEN ${open} THEN 1 ELSE 0 END AS ${d.quote(OPEN)} FROM (${selectOf(driver, base)}) kv) ko`,
    params: base.params,
    orderBy: base.orderBy,
  };
  return { ...(await readPage(driver, query, pageNumber(ctx.url), ctx.pageSize)), query };
}

/** The key's versions: the timeline, the values with what changed marked, the commits that made them. */
async function historyPage(ctx: PageContext, key: Record<string, string>, history: Page & { query: RowQuery }): Promise<PageResult> {
  const { flow, driver, record } = ctx;
  const scd2 = flow.storedAs === 'scd2';
  const columns = history.query.columns.map((c) => c.name).filter((n) => n !== CHANGED && n !== OPEN && n !== TIES_COLUMN);
  const made = await commitsOfVersions(driver, ctx, key);
  const identity = (row: Record<string, unknown>) => (scd2 ? JSON.stringify(row[flow.startAtColumn] ?? null) : '');
  const changedOf = (row: Record<string, unknown>) =>
    row[CHANGED] === '(first)'
      ? []
      : String(row[CHANGED] ?? '')
          .split(', ')
          .filter(Boolean);
  const sequence = new Set(record.model.seq.map((c) => c.name));
  const tracked = record.model.tracked.length ? record.model.tracked : record.model.payload.map((c) => c.name).filter((n) => !sequence.has(n));
  const label = (row: Record<string, unknown>) => {
    const changed = changedOf(row).filter((c) => !sequence.has(c));
    const cols = changed.length ? changed : tracked;
    return cols.map((c) => valueText(row[c])).join(' · ') || '(no change of values)';
  };
  const offset = (history.page - 1) * ctx.pageSize;
  const versions: TimelineVersion[] = history.rows.map((row, i) => ({
    start: row[flow.startAtColumn],
    end: row[flow.endAtColumn],
    open: Number(row[OPEN]) === 1,
    deleted: flow.deletes === 'tombstone' && row[flow.deletedColumn] === true,
    label: label(row),
    href: `#v${offset + i + 1}`,
  }));
  const commitLink = (v: number) => html`<a href="/commits/${v}">commit ${v}</a>`;
  const absent = made ? 'not in the change feed' : 'no change feed';
  const madeBy = (row: Record<string, unknown>) => {
    const m = made?.get(identity(row));
    return m?.made !== undefined ? commitLink(m.made) : html`<span class="none">${absent}</span>`;
  };
  // A version is closed by a later commit, or arrives closed (a later event of its key was read
  // with it): then the commit that wrote it set its end too.
  const endSetBy = (row: Record<string, unknown>) => {
    if (Number(row[OPEN]) === 1) return html`<span class="none">open: no end yet</span>`;
    const m = made?.get(identity(row));
    if (m?.ended !== undefined) return commitLink(m.ended);
    if (m?.made !== undefined) return html`${commitLink(m.made)} <span class="none">(written with its end)</span>`;
    return html`<span class="none">${absent}</span>`;
  };
  const what = ctx.keyColumns.map((k) => `${k} = ${key[k]}`).join(', ');
  const body: Html = html`<h1>${flow.target}: ${what}</h1>
<p>${history.rows.length} version${history.rows.length === 1 ? '' : 's'}${history.hasNext || history.page > 1 ? ` on page ${history.page}` : ''}, oldest first.${scd2 && hasGaps(versions, history.hasNext) ? ' Hatched: where the key was deleted.' : ''}${scd2 && !labelsBars(versions.length) ? ' Point at a bar for its values.' : ''}</p>
${scd2 ? timelineSvg(versions, history.hasNext) : ''}
<h2>Versions</h2>
${rowsTable(history.rows, {
  columns,
  highlight: (row, column) => changedOf(row).includes(column),
  extra: [
    { header: '#', cell: (_row, i) => html`<span id="v${offset + i + 1}">${offset + i + 1}</span>` },
    { header: 'made by', cell: madeBy },
    ...(scd2 ? [{ header: 'end set by', cell: endSetBy }] : []),
  ],
})}
${pager(ctx.url, history)}
<p><a href="${href('/key')}">find another key</a></p>`;
  return { title: what, body };
}

/**
 * Per version of the key (by its start; scd1: the one row), the last commit that wrote its values
 * (an insert, or a post-image whose values differ from its pre-image's) and the last that only
 * changed its end (a close: a pre- and post-image of the same version differing in the end and
 * is-current columns alone). Read from the change feed as `scd changes` reads it (changesQuery:
 * scdkit's own feed, or the engine's, e.g. Delta's change data feed), so it is the same on every
 * engine. Undefined when the target keeps no change feed.
 */
async function commitsOfVersions(driver: Driver, ctx: PageContext, key: Record<string, string>): Promise<Map<string, { made?: number; ended?: number }> | undefined> {
  const { flow, record } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  if (!d.capabilities.changeFeed && !(await driver.columns(storeNames(flow.target).changes))) return undefined;
  const scd2 = flow.storedAs === 'scd2';
  const feed = narrow(await changesQuery(driver, flow, 1), (p) => record.model.keys.map((k) => `${d.toText(q(k.name))} = CAST(${p(key[k.name])} AS ${d.types.text})`));
  const rows = await readRows(driver, feed);
  // The columns a close changes, and the feed's own: the rest are the version's values.
  const notValues = new Set([flow.endAtColumn, flow.isCurrentColumn, '_change_type', '_commit_version', '_commit_timestamp']);
  const values = (row: Record<string, unknown>) =>
    JSON.stringify(
      Object.entries(row).filter(([c]) => !notValues.has(c)),
      (_k, v) => (typeof v === 'bigint' ? v.toString() : v),
    );
  const identity = (row: Record<string, unknown>) => (scd2 ? JSON.stringify(row[flow.startAtColumn] ?? null) : '');
  const preimages = new Map<string, string>();
  for (const r of rows) if (r._change_type === 'update_preimage') preimages.set(`${Number(r._commit_version)} ${identity(r)}`, values(r));
  const out = new Map<string, { made?: number; ended?: number }>();
  for (const r of rows) {
    const id = identity(r);
    const v = Number(r._commit_version);
    const entry = out.get(id) ?? {};
    const closes = r._change_type === CLOSE_TYPE || (scd2 && r._change_type === 'update_postimage' && preimages.get(`${v} ${id}`) === values(r));
    if (closes) entry.ended = Math.max(entry.ended ?? 0, v);
    else if (r._change_type === 'insert' || r._change_type === 'update_postimage') entry.made = Math.max(entry.made ?? 0, v);
    out.set(id, entry);
  }
  for (const e of out.values()) if (e.ended !== undefined && e.made !== undefined && e.ended < e.made) delete e.ended;
  return out;
}

/** Keys whose text starts with the given values (every key when none is given), one page. */
async function findKeys(ctx: PageContext, given: Record<string, string>): Promise<Page> {
  const { driver, flow, record } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  const keys = record.model.keys;
  const list = keys.map((k) => q(k.name)).join(', ');
  const query = narrow({ columns: keys, from: `(SELECT DISTINCT ${list} FROM ${q(flow.target)}) ks`, orderBy: keys.map((k) => q(k.name)) }, (p) =>
    keys
      .filter((k) => given[k.name] !== '')
      .map((k) => {
        const v = p(given[k.name]);
        return `substr(${d.toText(q(k.name))}, 1, length(CAST(${v} AS ${d.types.text}))) = CAST(${v} AS ${d.types.text})`;
      }),
  );
  return readPage(driver, query, pageNumber(ctx.url), ctx.pageSize);
}
