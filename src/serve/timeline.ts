import { valueText } from './format.js';
import { type Html, html, raw } from './html.js';
import { fitText, textWidth } from './text-width.js';

/** One version of a key on the timeline. */
export interface TimelineVersion {
  start: unknown;
  end: unknown;
  /** The version has no end (the current one, or a current tombstone). */
  open: boolean;
  /** A tombstone version (deletes: tombstone). */
  deleted: boolean;
  /** Short text beside the bar (what this version changed). */
  label: string;
  /** Where the bar links to (the version's row in the values table). */
  href: string;
}

const WIDTH = 900;
/** Room for the versions' labels, left of the bars (none when the rows are too thin for a label). */
const GUTTER = 170;
const RIGHT = 40;
/** A version's row: this high while the chart stays under PLOT_HEIGHT, thinner for many versions. */
const ROW = 24;
const MIN_ROW = 4;
/** Rows thinner than this carry no label (each bar keeps its title, shown on hover). */
const LABELLED_ROW = 16;
const PLOT_HEIGHT = 480;
const TOP = 8;
const AXIS = 34;
/** Least room between two axis labels. */
const TICK_GAP = 10;

/**
 * A sequence value as a number on the axis: a number, a date or timestamp in ISO-8601, or the
 * first part of a tuple sequence; undefined when it is none of these (the axis is then ordinal).
 */
function axisNumber(v: unknown): number | undefined {
  if (v !== null && typeof v === 'object') return axisNumber(Object.values(v as Record<string, unknown>)[0]);
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v);
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}(:?\d{2})?)?$/.test(v)) {
    const iso = v.length === 10 ? `${v}T00:00:00Z` : /Z|[+-]\d{2}(:?\d{2})?$/.test(v.slice(10)) ? v.replace(' ', 'T') : `${v.replace(' ', 'T')}Z`;
    const t = Date.parse(iso);
    return Number.isNaN(t) ? undefined : t;
  }
  return undefined;
}

/**
 * The positions of the versions' boundaries on the axis: proportional to the sequence when every
 * boundary is a number or a time (and they are not all equal), else evenly spaced in order
 * (versions are given oldest first, so boundaries come in sequence order).
 */
function positions(versions: TimelineVersion[]): { start: number[]; end: number[]; max: number } {
  const starts = versions.map((v) => axisNumber(v.start));
  const ends = versions.map((v) => (v.open ? undefined : axisNumber(v.end)));
  const known = [...starts, ...ends.filter((_, i) => !versions[i]!.open)];
  const proportional = known.every((n) => n !== undefined) && new Set(known).size > 1;
  if (proportional) {
    const min = Math.min(...(known as number[]));
    const last = Math.max(...(known as number[]));
    const span = last - min;
    // Room after the last boundary: the open version runs on into it, or the key is deleted there.
    const max = span * 1.15;
    return { start: starts.map((s) => s! - min), end: ends.map((e, i) => (versions[i]!.open ? max : e! - min)), max };
  }
  // Ordinal: each distinct boundary, in order, one step further.
  const steps: string[] = [];
  const step = (v: unknown) => {
    const k = valueText(v);
    if (steps[steps.length - 1] !== k) steps.push(k);
    return steps.length - 1;
  };
  const start: number[] = [];
  const end: number[] = [];
  for (const v of versions) {
    start.push(step(v.start));
    end.push(v.open ? -1 : step(v.end));
  }
  const max = Math.max(steps.length - 1, 1) + 1;
  return { start, end: end.map((e) => (e < 0 ? max : e)), max };
}

interface Gap {
  from: number;
  to: number;
  text: string;
}

/**
 * Where the key was deleted, on the axis: a stretch between one version's end and the next one's
 * start, or after the last closed version. `more`: later versions exist (on a next page), so the
 * last one here ending is no deletion.
 */
function gapsOf(versions: TimelineVersion[], { start, end, max }: ReturnType<typeof positions>, more: boolean): Gap[] {
  const gaps: Gap[] = [];
  versions.forEach((v, i) => {
    if (v.open) return;
    const next = versions[i + 1];
    if (!next) {
      if (!more) gaps.push({ from: end[i]!, to: max, text: `deleted from ${valueText(v.end)}` });
    } else if (start[i + 1]! > end[i]!) gaps.push({ from: end[i]!, to: start[i + 1]!, text: `deleted from ${valueText(v.end)} to ${valueText(next.start)}` });
  });
  return gaps;
}

/** The timeline of these versions shows a deletion (a hatched gap); `more` as for timelineSvg. */
export function hasGaps(versions: TimelineVersion[], more = false): boolean {
  return gapsOf(versions, positions(versions), more).length > 0;
}

/**
 * The versions of one key as bars on the sequence axis, one row each, oldest first: a bar runs
 * from its start to its end (the open one to the right edge, with an arrow); a stretch between
 * one version's end and the next one's start (or after the last closed one) is a gap, where the
 * key was deleted, hatched. `more`: the key has later versions than these (a next page). Every
 * text is escaped by the html template.
 */
/** The row of each version on a timeline of `count` versions. */
function rowHeight(count: number): number {
  return Math.max(MIN_ROW, Math.min(ROW, Math.floor(PLOT_HEIGHT / count)));
}

/** A timeline of `count` versions labels each bar (else each bar's values show on hover). */
export function labelsBars(count: number): boolean {
  return rowHeight(count) >= LABELLED_ROW;
}

export function timelineSvg(versions: TimelineVersion[], more = false): Html {
  const pos = positions(versions);
  const { start, end, max } = pos;
  // Many versions share the plot's height (80 versions stay a chart, not a 2,000 px column).
  const row = rowHeight(versions.length);
  const labelled = labelsBars(versions.length);
  const gutter = labelled ? GUTTER : 12;
  const plot = WIDTH - gutter - RIGHT;
  const x = (p: number) => gutter + (max > 0 ? (p / max) * plot : 0);
  const height = TOP + versions.length * row + AXIS;
  const gaps = gapsOf(versions, pos, more);
  // Axis labels at each boundary, skipping one that would touch the previous; each kept inside the chart.
  const ticks: Array<{ at: number; text: string }> = [];
  versions.forEach((v, i) => {
    ticks.push({ at: x(start[i]!), text: valueText(v.start) });
    if (!v.open) ticks.push({ at: x(end[i]!), text: valueText(v.end) });
  });
  ticks.sort((a, b) => a.at - b.at);
  const shown: Array<{ at: number; text: string; left: number; right: number }> = [];
  for (const t of ticks) {
    const text = fitText(t.text, WIDTH - 4);
    const w = textWidth(text);
    const left = Math.min(Math.max(t.at - w / 2, 2), WIDTH - 2 - w);
    if (!shown.length || left >= shown[shown.length - 1]!.right + TICK_GAP) shown.push({ at: t.at, text, left, right: left + w });
  }
  const axisY = TOP + versions.length * row + 4;
  const bar = row > 8 ? row - 6 : row - 1;
  return html`<svg class="timeline" role="img" aria-label="versions on the sequence axis" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#f3c4c4"/></pattern></defs>
${gaps.map((g) => html`<rect class="gap" x="${x(g.from)}" y="${TOP}" width="${Math.max(x(g.to) - x(g.from), 2)}" height="${versions.length * row}" fill="url(#hatch)"><title>${g.text}</title></rect>`)}
${versions.map((v, i) => {
  const y = TOP + i * row + (row - bar) / 2;
  const x0 = x(start[i]!);
  const w = Math.max(x(end[i]!) - x0, 3);
  const fill = v.deleted ? '#b3261e' : v.open ? '#2a9d8f' : '#457b9d';
  const span = `${valueText(v.start)} → ${v.open ? '(open)' : valueText(v.end)}`;
  return html`<a href="${v.href}">${labelled ? html`<text x="${gutter - 8}" y="${y + 13}" text-anchor="end">${fitText(v.label, gutter - 12)}</text>` : ''}
<rect class="version${v.open ? ' open' : ''}${v.deleted ? ' deleted' : ''}" x="${x0}" y="${y}" width="${w}" height="${bar}" rx="${Math.min(3, bar / 3)}" fill="${fill}"><title>${v.label}: ${span}</title></rect>
${v.open ? html`<path d="${raw(`M${x0 + w} ${y} l8 ${bar / 2} l-8 ${bar / 2} z`)}" fill="${fill}"/>` : ''}</a>`;
})}
<line x1="${gutter}" y1="${axisY}" x2="${WIDTH - RIGHT + 8}" y2="${axisY}" stroke="#888"/>
${shown.map((t) => html`<line x1="${t.at}" y1="${axisY}" x2="${t.at}" y2="${axisY + 4}" stroke="#888"/><text x="${t.left}" y="${axisY + 16}">${t.text}</text>`)}
</svg>`;
}
