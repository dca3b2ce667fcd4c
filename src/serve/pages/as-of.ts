import { ScdError } from '../../errors.js';
import { checkedSequenceValue } from '../../plan/sequence-value.js';
import { asOfQuery } from '../../query/history.js';
import type { PageContext, PageResult } from '../context.js';
import { href, html } from '../html.js';
import { pageNumber, pager, readPage } from '../paging.js';
import { rowsTable } from '../rows-table.js';
import { firstPart, firstPartType, openEnd } from '../sequence-sql.js';

/**
 * `/as-of?t=TIME`: the versions valid at TIME, paged, with the time in a form and links to the
 * previous and next change (the nearest start or end before and after it). Without t: the latest
 * boundary, a start or an end (so the page opens on the table as it is now: a key deleted after
 * its last version started is not shown as live).
 */
export async function asOfPage(ctx: PageContext): Promise<PageResult> {
  const { driver, flow, record, url } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  const model = record.model;
  if (flow.storedAs !== 'scd2') throw new ScdError('USAGE', `${flow.target} is stored as scd1: it keeps no history to go back in`, { fix: 'open the overview for its rows' });
  const start = firstPart(d, model, flow.startAtColumn);
  const end = firstPart(d, model, flow.endAtColumn);
  const type = firstPartType(model);
  // Every start, and every end that closes a version (an open end, null or the sentinel, is none).
  const bounds = `(SELECT ${start} AS b FROM ${q(flow.target)} UNION ALL SELECT ${end} FROM ${q(flow.target)} WHERE NOT ${openEnd(flow, model, d)}) bb`;
  let t = url.searchParams.get('t')?.trim() ?? '';
  const latest = !t;
  if (latest) {
    const last = (await driver.query(`SELECT ${d.toText('max(b)')} AS t FROM ${bounds}`))[0]?.t;
    t = last == null ? '' : String(last);
  }
  const form = (prev?: string, next?: string) => html`<form class="filters" method="get" action="/as-of">
<label>time (a value of ${model.seq[0]!.name})<input name="t" value="${t}" size="28"></label>
<button type="submit">Show</button>
${prev ? html`<a rel="prev" class="move" href="${href('/as-of', { t: prev })}">← previous change (${prev})</a>` : ''}
${next ? html`<a rel="next" class="move" href="${href('/as-of', { t: next })}">next change (${next}) →</a>` : ''}
</form>`;
  if (!t) return { title: 'As of', body: html`<h1>As of</h1>${form()}<p>The target has no rows.</p>` };
  const value = await checkedSequenceValue(driver, t, model.seq[0]!);
  const at = `CAST($1 AS ${type})`;
  const near = (
    await driver.query(`SELECT (SELECT ${d.toText('max(b)')} FROM ${bounds} WHERE b < ${at}) AS prev, (SELECT ${d.toText('min(b)')} FROM ${bounds} WHERE b > ${at}) AS next`, [
      value,
    ])
  )[0]!;
  const query = await asOfQuery(driver, flow, t);
  const page = await readPage(driver, query, pageNumber(url), ctx.pageSize);
  return {
    title: `As of ${t}`,
    body: html`<h1>${flow.target} as of ${t}${latest ? ' (the latest change: as it is now)' : ''}</h1>
${form(near.prev == null ? undefined : String(near.prev), near.next == null ? undefined : String(near.next))}
${rowsTable(page.rows, { columns: query.columns.map((c) => c.name), keyColumns: ctx.keyColumns, empty: `No version was valid at ${t}.` })}
${pager(url, page)}`,
  };
}
