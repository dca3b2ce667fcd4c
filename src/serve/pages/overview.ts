import { commitLogQuery } from '../../query/history.js';
import { storeNames } from '../../store/names.js';
import { type ChartCommit, commitChartSvg } from '../commit-chart.js';
import { commitsTable } from '../commit-summary.js';
import type { PageContext, PageResult } from '../context.js';
import { count } from '../format.js';
import { html } from '../html.js';
import { pageNumber, pager, readPage } from '../paging.js';

/** Commits in the chart: the latest ones. */
const CHART_COMMITS = 60;

/** `/`: the target, its counts, the latest commits with what each read, and a chart of them. */
export async function overviewPage(ctx: PageContext): Promise<PageResult> {
  const { driver, flow, record } = ctx;
  const q = driver.dialect.quote;
  const names = storeNames(flow.target);
  const keys = record.model.keys.map((k) => q(k.name)).join(', ');
  const hasQuarantine = !!(await driver.columns(names.quarantine));
  const counts = (
    await driver.query(
      `SELECT (SELECT count(*) FROM ${q(names.target)}) AS total,
        (SELECT count(*) FROM ${q(names.current)}) AS current_rows,
        (SELECT count(*) FROM (SELECT DISTINCT ${keys} FROM ${q(names.target)}) k) AS keys,
        ${hasQuarantine ? `(SELECT count(*) FROM ${q(names.quarantine)})` : '0'} AS quarantined`,
    )
  )[0]!;
  const log = await commitLogQuery(driver, flow);
  const page = await readPage(driver, log, pageNumber(ctx.url), ctx.pageSize);
  const chart = await chartCommits(ctx, log.from, log.where!, log.params ?? []);
  const seq = record.model.seq.map((c) => c.name).join(', ');
  return {
    title: 'Overview',
    body: html`<h1>${flow.target}</h1>
<dl class="stats">
<dt>engine</dt><dd>${driver.dialect.name} · ${driver.location}</dd>
<dt>stored as</dt><dd>${flow.storedAs}</dd>
<dt>keys</dt><dd>${record.model.keys.map((k) => k.name).join(', ')}</dd>
<dt>sequence</dt><dd>${seq}</dd>
<dt>rows</dt><dd id="rows">${count(counts.total)}</dd>
<dt>distinct keys</dt><dd id="keys">${count(counts.keys)}</dd>
<dt>current rows</dt><dd id="current-rows">${count(counts.current_rows)}</dd>
<dt>quarantined records</dt><dd id="quarantined"><a href="/quarantine">${count(counts.quarantined)}</a></dd>
</dl>
${commitChartSvg(chart)}
<h2>Commits</h2>
${commitsTable(page.rows)}
${pager(ctx.url, page)}`,
  };
}

/** The latest commits, oldest first, with the target's rows after each (a running sum over every commit). */
async function chartCommits(ctx: PageContext, from: string, where: string, params: unknown[]): Promise<ChartCommit[]> {
  const t = ctx.driver.dialect.types;
  const rows = await ctx.driver.query(
    `SELECT version, rows_read, changes, target_rows FROM (
       SELECT version, rows_read, rows_inserted + rows_updated + rows_deleted AS changes,
         sum(rows_inserted - rows_deleted) OVER (ORDER BY version) AS target_rows
       FROM ${from} WHERE ${where}) c
     ORDER BY version DESC LIMIT CAST($${params.length + 1} AS ${t.int})`,
    [...params, CHART_COMMITS],
  );
  return rows.reverse().map((r) => ({
    version: Number(r.version),
    rowsRead: Number(r.rows_read),
    changes: Number(r.changes),
    targetRows: Number(r.target_rows),
  }));
}
