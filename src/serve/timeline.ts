import { valueText } from './format.js';
import { html, raw, type Html } from './html.js';

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
const GUTTER = 170;
const RIGHT = 40;
const ROW = 24;
const TOP = 8;
const AXIS = 34;

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
export function timelineSvg(versions: TimelineVersion[], more = false): Html {
  const pos = positions(versions);
  const { start, end, max } = pos;
  const plot = WIDTH - GUTTER - RIGHT;
  const x = (p: number) => GUTTER + (max > 0 ? (p / max) * plot : 0);
  const height = TOP + versions.length * ROW + AXIS;
  const gaps = gapsOf(versions, pos, more);
  // Axis labels at each boundary, skipping one too close to the previous.
  const ticks: Array<{ at: number; text: string }> = [];
  versions.forEach((v, i) => {
    ticks.push({ at: x(start[i]!), text: valueText(v.start) });
    if (!v.open) ticks.push({ at: x(end[i]!), text: valueText(v.end) });
  });
  ticks.sort((a, b) => a.at - b.at);
  const shown: typeof ticks = [];
  for (const t of ticks) if (!shown.length || t.at - shown[shown.length - 1]!.at >= 78) shown.push(t);
  const axisY = TOP + versions.length * ROW + 4;
  return html`<svg class="timeline" role="img" aria-label="versions on the sequence axis" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" xmlns="http://www.w3.org/2000/svg">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#f3c4c4"/></pattern></defs>
${gaps.map((g) => html`<rect class="gap" x="${x(g.from)}" y="${TOP}" width="${Math.max(x(g.to) - x(g.from), 2)}" height="${versions.length * ROW}" fill="url(#hatch)"><title>${g.text}</title></rect>`)}
${versions.map((v, i) => {
  const y = TOP + i * ROW + 3;
  const x0 = x(start[i]!);
  const w = Math.max(x(end[i]!) - x0, 3);
  const fill = v.deleted ? '#b3261e' : v.open ? '#2a9d8f' : '#457b9d';
  const span = `${valueText(v.start)} → ${v.open ? '(open)' : valueText(v.end)}`;
  return html`<a href="${v.href}"><text x="${GUTTER - 8}" y="${y + 13}" text-anchor="end">${truncate(v.label, 26)}</text>
<rect class="version${v.open ? ' open' : ''}${v.deleted ? ' deleted' : ''}" x="${x0}" y="${y}" width="${w}" height="${ROW - 6}" rx="3" fill="${fill}"><title>${v.label}: ${span}</title></rect>
${v.open ? html`<path d="${raw(`M${x0 + w} ${y} l8 ${(ROW - 6) / 2} l-8 ${(ROW - 6) / 2} z`)}" fill="${fill}"/>` : ''}</a>`;
})}
<line x1="${GUTTER}" y1="${axisY}" x2="${WIDTH - RIGHT + 8}" y2="${axisY}" stroke="#888"/>
${shown.map((t) => html`<line x1="${t.at}" y1="${axisY}" x2="${t.at}" y2="${axisY + 4}" stroke="#888"/><text x="${t.at}" y="${axisY + 16}" text-anchor="middle">${t.text}</text>`)}
</svg>`;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}
