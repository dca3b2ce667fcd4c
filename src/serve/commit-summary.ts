import path from 'node:path';
import { count } from './format.js';
import { type Html, html } from './html.js';

/** A commit log row (commitLogQuery's columns) as a person reads it. */
export type CommitRow = Record<string, unknown>;

/** rows read = applied + duplicates + quarantined (+ dropped, + skipped when there are any). */
export function readBreakdown(c: CommitRow): string {
  const extra = [Number(c.dropped) ? ` + ${count(c.dropped)} dropped` : '', Number(c.skipped) ? ` + ${count(c.skipped)} skipped` : ''].join('');
  return `${count(c.rows_read)} = ${count(c.events_applied)} + ${count(c.duplicates)} + ${count(c.quarantined)}${extra}`;
}

/** The commit's input files (stored as a JSON array of paths). */
export function inputsOf(c: CommitRow): string[] {
  try {
    const v = JSON.parse(String(c.inputs ?? '[]')) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [String(c.inputs)];
  }
}

/** Failed records per expectation, "name: n, ..." (empty when none). */
export function expectationsText(c: CommitRow): string {
  try {
    const v = JSON.parse(String(c.expectations ?? '{}')) as Record<string, number>;
    return Object.entries(v)
      .map(([k, n]) => `${k}: ${count(n)}`)
      .join(', ');
  } catch {
    return String(c.expectations);
  }
}

/**
 * The commit log as a table, newest first; each version links to its commit page. Kept narrow
 * enough for an 800 px window: the row counts share a column, and the expectations column is
 * shown only when a commit on the page has failed ones.
 */
export function commitsTable(commits: CommitRow[]): Html {
  if (!commits.length) return html`<p>(no commits)</p>`;
  const withExpectations = commits.some((c) => expectationsText(c) !== '');
  return html`<div class="wide"><table class="commits"><thead><tr><th>commit</th><th>committed at</th><th>operation</th><th>inputs</th>
<th>rows read = applied + duplicates + quarantined</th><th>keys changed</th><th>versions added / changed / removed</th><th>closed</th>${withExpectations ? html`<th>expectations</th>` : ''}<th>ms</th></tr></thead>
<tbody>${commits.map(
    (
      c,
    ) => html`<tr><td class="num"><a href="/commits/${Number(c.version)}">${Number(c.version)}</a></td><td class="time">${String(c.committed_at)}</td><td>${String(c.operation)}</td>
<td class="inputs">${inputsOf(c).map((f, i) => html`${i ? ', ' : ''}<span title="${f}">${path.basename(f)}</span>`)}</td>
<td class="num sum">${readBreakdown(c)}</td><td class="num">${count(c.keys_affected)}</td><td class="num sum">${count(c.rows_inserted)} / ${count(c.rows_updated)} / ${count(c.rows_deleted)}</td>
<td class="num">${count(c.versions_closed)}</td>${withExpectations ? html`<td>${expectationsText(c)}</td>` : ''}<td class="num">${count(c.duration_ms)}</td></tr>`,
  )}</tbody></table></div>`;
}
