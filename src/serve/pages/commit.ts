import { changesQuery, commitLogQuery, latestVersion } from '../../query/history.js';
import { readRows } from '../../query/output.js';
import { expectationsText, inputsOf, readBreakdown } from '../commit-summary.js';
import type { PageContext, PageResult } from '../context.js';
import { count } from '../format.js';
import { html } from '../html.js';
import { narrow, pageNumber, pager, readPage } from '../paging.js';
import { rowsTable } from '../rows-table.js';

/** `/commits/<n>`: a commit's counts, its inputs and its change feed, paged. */
export async function commitPage(ctx: PageContext, version: number): Promise<PageResult> {
  const { driver, flow } = ctx;
  const log = await commitLogQuery(driver, flow);
  const [c] = await readRows(
    driver,
    narrow(log, (p) => [`version = CAST(${p(version)} AS ${driver.dialect.types.int})`]),
  );
  const latest = await latestVersion(driver, flow);
  if (!c) return { status: 404, title: `No commit ${version}`, body: html`<h1>No commit ${version}</h1><p class="error">${flow.target} has commits 1 to ${latest}.</p>` };
  const feed = await changesQuery(driver, flow, version, version);
  const page = await readPage(driver, feed, pageNumber(ctx.url), ctx.pageSize);
  const shown = feed.columns.map((col) => col.name).filter((n) => n !== '_commit_version' && n !== '_commit_timestamp');
  const data = shown.filter((n) => n !== '_change_type');
  const keys = ctx.keyColumns;
  // An update's post-image follows its pre-image (the feed's order): the values it changed are marked.
  const changedFromPre = (row: Record<string, unknown>, column: string, i: number) => {
    const pre = page.rows[i - 1];
    return (
      row._change_type === 'update_postimage' &&
      pre?._change_type === 'update_preimage' &&
      keys.every((k) => JSON.stringify(pre[k]) === JSON.stringify(row[k])) &&
      data.includes(column) &&
      JSON.stringify(pre[column]) !== JSON.stringify(row[column])
    );
  };
  const expectations = expectationsText(c);
  return {
    title: `Commit ${version}`,
    body: html`<h1>Commit ${version} <small>(${String(c.operation)})</small></h1>
<nav class="pager">${version > 1 ? html`<a href="/commits/${version - 1}">← commit ${version - 1}</a>` : ''}${version < latest ? html`<a href="/commits/${version + 1}">commit ${version + 1} →</a>` : ''}</nav>
<dl class="stats">
<dt>committed at</dt><dd>${String(c.committed_at)}</dd>
<dt>rows read = applied + duplicates + quarantined</dt><dd id="rows-read">${readBreakdown(c)}</dd>
<dt>ties</dt><dd>${count(c.ties)}</dd>
<dt>keys changed</dt><dd>${count(c.keys_affected)}</dd>
<dt>versions added / changed / removed</dt><dd>${count(c.rows_inserted)} / ${count(c.rows_updated)} / ${count(c.rows_deleted)}</dd>
<dt>versions closed</dt><dd>${count(c.versions_closed)}</dd>
<dt>expectations</dt><dd>${expectations || 'none failed'}</dd>
<dt>quarantined</dt><dd>${Number(c.quarantined) ? html`<a href="/quarantine?commit=${version}">${count(c.quarantined)}</a>` : '0'}</dd>
<dt>duration</dt><dd>${count(c.duration_ms)} ms</dd>
</dl>
<h2>Inputs</h2>
${inputsOf(c).length ? html`<ul class="inputs">${inputsOf(c).map((f) => html`<li><code>${f}</code></li>`)}</ul>` : html`<p>(none)</p>`}
<h2>Change feed</h2>
${rowsTable(page.rows, {
  columns: ['_change_type', ...data],
  keyColumns: keys,
  highlight: changedFromPre,
  rowClass: (r) => String(r._change_type),
  empty: 'This commit changed no rows.',
})}
${pager(ctx.url, page)}`,
  };
}
