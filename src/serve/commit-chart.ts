import { count } from './format.js';
import { type Html, html, raw } from './html.js';
import { fitText, textWidth } from './text-width.js';

/** One commit in the chart: what it read, what it changed, the target's rows after it. */
export interface ChartCommit {
  version: number;
  rowsRead: number;
  /** Rows inserted + updated + deleted. */
  changes: number;
  /** Rows in the target after the commit. */
  targetRows: number;
}

const WIDTH = 640;
const HEIGHT = 120;
const PAD = 22;

/**
 * A small chart of the latest commits, oldest on the left: a bar per commit for the rows it read,
 * the rows it changed drawn over it, and a line through the target's row count after each commit
 * (its own scale, labelled at the right). Bars and a line need no charting library.
 */
export function commitChartSvg(commits: ChartCommit[]): Html {
  if (!commits.length) return html``;
  const last = commits[commits.length - 1]!;
  // The target's rows are labelled at the right of the plot: room for the label, whatever its length.
  const rowsLabel = `${count(last.targetRows)} rows`;
  const plotW = WIDTH - 2 * PAD - textWidth(rowsLabel) - 6;
  const plotH = HEIGHT - 2 * PAD;
  const slot = plotW / commits.length;
  const bar = Math.max(Math.min(slot * 0.7, 24), 1);
  const maxRead = Math.max(...commits.map((c) => Math.max(c.rowsRead, c.changes)), 1);
  const maxRows = Math.max(...commits.map((c) => c.targetRows), 1);
  const y = (v: number, max: number) => PAD + plotH - (v / max) * plotH;
  const cx = (i: number) => PAD + slot * i + slot / 2;
  const line = commits.map((c, i) => `${i ? 'L' : 'M'}${cx(i).toFixed(1)} ${y(c.targetRows, maxRows).toFixed(1)}`).join(' ');
  const title = fitText(`rows read (light) and changed (dark) per commit; max ${count(maxRead)}`, WIDTH - 2 * PAD);
  return html`<svg class="commit-chart" role="img" aria-label="rows read and changed per commit, and the target's rows" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" xmlns="http://www.w3.org/2000/svg">
<line x1="${PAD}" y1="${PAD + plotH}" x2="${PAD + plotW}" y2="${PAD + plotH}" stroke="#888"/>
${commits.map((c, i) => {
  const x0 = cx(i) - bar / 2;
  return html`<a href="/commits/${c.version}"><g class="commit-bar"><title>commit ${c.version}: ${count(c.rowsRead)} rows read, ${count(c.changes)} changed; ${count(c.targetRows)} rows after it</title>
<rect class="read" x="${x0}" y="${y(c.rowsRead, maxRead)}" width="${bar}" height="${PAD + plotH - y(c.rowsRead, maxRead)}" fill="#a8c5da"/>
<rect class="changed" x="${x0 + bar * 0.2}" y="${y(c.changes, maxRead)}" width="${bar * 0.6}" height="${PAD + plotH - y(c.changes, maxRead)}" fill="#1d3557"/></g></a>`;
})}
<path class="rows" d="${raw(line)}" fill="none" stroke="#e76f51" stroke-width="2"/>
<text x="${PAD}" y="${PAD - 8}">${title}</text>
<text x="${cx(commits.length - 1) + bar / 2 + 4}" y="${y(last.targetRows, maxRows) + 4}" fill="#e76f51">${rowsLabel}</text>
<text x="${PAD}" y="${HEIGHT - 6}">commit ${commits[0]!.version}</text>
<text x="${PAD + plotW}" y="${HEIGHT - 6}" text-anchor="end">commit ${last.version}</text>
</svg>`;
}
