import { ScdError } from '../../errors.js';
import { latestVersion, quarantineQuery } from '../../query/history.js';
import { storeNames } from '../../store/names.js';
import type { PageContext, PageResult } from '../context.js';
import { cell } from '../format.js';
import { html } from '../html.js';
import { narrow, pageNumber, pager, readPage } from '../paging.js';

/** Reasons offered as suggestions in the filter. */
const REASON_SUGGESTIONS = 30;

/**
 * The commit a `commit=` filter names: undefined when empty; a number of a commit the target has
 * (so it is bound in range of the engine's integer type), else the page answers 400 (not a
 * number) or 404 (no such commit), saying which commits there are.
 */
async function commitFilter(ctx: PageContext, text: string): Promise<number | undefined> {
  if (text === '') return undefined;
  if (!/^\d+$/.test(text)) throw new ScdError('USAGE', `commit ${text} is not a commit number`, { fix: 'give a whole number, e.g. commit=1, or leave it empty for every commit' });
  const latest = await latestVersion(ctx.driver, ctx.flow);
  const n = Number(text);
  if (n < 1 || n > latest)
    throw new ScdError('NOT_APPLIED', `${ctx.flow.target} has no commit ${text}: ${latest ? `its commits are 1 to ${latest}` : 'it has no commits yet'}`, {
      fix: 'give one of them, or leave commit empty for every commit',
    });
  return n;
}

/** `/quarantine?commit=N&reason=TEXT`: bad records with reason, file:line and raw text, filtered and paged. */
export async function quarantinePage(ctx: PageContext): Promise<PageResult> {
  const { driver, flow, url } = ctx;
  const q = driver.dialect.quote;
  const t = driver.dialect.types;
  const commitParam = url.searchParams.get('commit')?.trim() ?? '';
  const commit = await commitFilter(ctx, commitParam);
  const reason = url.searchParams.get('reason') ?? '';
  const names = storeNames(flow.target);
  const form = (reasons: string[]) => html`<form class="filters" method="get" action="/quarantine">
<label>commit<input name="commit" value="${commitParam}" inputmode="numeric" size="6"></label>
<label>reason contains<input name="reason" value="${reason}" list="reasons" size="40"></label>
<datalist id="reasons">${reasons.map((r) => html`<option value="${r}">`)}</datalist>
<button type="submit">Filter</button> <a href="/quarantine">clear</a>
</form>`;
  if (!(await driver.columns(names.quarantine))) return { title: 'Quarantine', body: html`<h1>Quarantine</h1>${form([])}<p>No record of ${flow.target} was quarantined.</p>` };
  let query = await quarantineQuery(driver, flow, commit);
  // Standard SQL's position(… IN …): DuckDB, PostgreSQL and Spark have it (Spark has no strpos).
  if (reason) query = narrow(query, (p) => [`position(CAST(${p(reason)} AS ${t.text}) IN reason) > 0`]);
  const page = await readPage(driver, query, pageNumber(url), ctx.pageSize);
  const reasons = (
    await driver.query(`SELECT reason, count(*) AS n FROM ${q(names.quarantine)} GROUP BY reason ORDER BY n DESC, reason LIMIT CAST($1 AS ${t.int})`, [REASON_SUGGESTIONS])
  ).map((r) => String(r.reason));
  const rows = page.rows;
  return {
    title: 'Quarantine',
    body: html`<h1>Quarantine</h1>
${form(reasons)}
${
  rows.length
    ? html`<div class="wide"><table class="quarantine"><thead><tr><th>commit</th><th>file:line</th><th>reason</th><th>raw record</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td class="num"><a href="/commits/${Number(r.commit)}">${Number(r.commit)}</a></td><td><code>${String(r.file ?? '')}:${String(r.line ?? '')}</code></td><td>${cell(r.reason)}</td><td><pre class="raw">${cell(r.raw)}</pre></td></tr>`)}
</tbody></table></div>`
    : html`<p class="empty">No quarantined record${commit !== undefined || reason ? ' matches these filters' : ''}.</p>`
}
${pager(url, page)}`,
  };
}
