/**
 * A reference model of SEMANTICS §2–§3, written straight from the text: an in-memory walk over plain
 * JS values. It is deliberately naive (sort everything, walk every key from scratch) and shares no
 * code with the engine's SQL. Values are integers, strings or null; a wider value (an instant, a
 * big integer, a decimal: wide-values.ts) is given in a canonical form whose JS order and text
 * agree with the engine's where the model orders and compares.
 */

export type Val = number | string | null;
export type Rec = Record<string, Val>;

/** What the model needs to know about a flow (mirrors the FlowInput given to the engine). */
export interface ModelSpec {
  /** Source columns in source order (every record carries all of them). */
  sourceColumns: string[];
  keys: string[];
  sequenceBy: string[];
  /** JS mirror of the flow's `applyAsDeletes` SQL expression. */
  isDelete?: (r: Rec) => boolean;
  /** JS mirror of the flow's `applyAsTruncates` SQL expression. */
  isTruncate?: (r: Rec) => boolean;
  /** The flow's `columns` (exact output list). */
  columns?: string[];
  exceptColumns?: string[];
  storedAs: 'scd1' | 'scd2';
  trackHistory?: string[];
  trackHistoryExcept?: string[];
  ignoreNullUpdates: boolean;
  /**
   * scd2: payload column → column holding its value on the key's previous version: the kept
   * version that ends where this one starts (null when none: a key's first version, or after a delete).
   */
  previousValues?: Record<string, string>;
  /** False for a record holding a value its column cannot store (a number beyond a double): it is quarantined. */
  fits?: (r: Rec) => boolean;
}

export const UPSERT = 0;
export const DELETE = 1;
export const TRUNCATE = 2;
export type Op = typeof UPSERT | typeof DELETE | typeof TRUNCATE;

export interface Event {
  /** Key values; null for a truncate (it applies to every key). */
  key: Val[] | null;
  seq: Val[];
  op: Op;
  /** Values of the payload columns (output columns minus keys), in source order. */
  payload: Val[];
}

export interface Counts {
  rowsRead: number;
  eventsApplied: number;
  duplicates: number;
  quarantined: number;
  ties: number;
}

/** Output columns (§2): keys always, then `columns` or all minus `exceptColumns`; source order. */
export function outputColumns(s: ModelSpec): string[] {
  return s.sourceColumns.filter((c) => s.keys.includes(c) || (s.columns ? s.columns.includes(c) : !(s.exceptColumns ?? []).includes(c)));
}

/** Payload columns: output columns other than keys (a kept sequence column is one of them). */
export function payloadColumns(s: ModelSpec): string[] {
  return outputColumns(s).filter((c) => !s.keys.includes(c));
}

/** Tracked columns (§2): payload minus sequence columns, narrowed by trackHistory(Except). */
export function trackedColumns(s: ModelSpec): string[] {
  const candidates = payloadColumns(s).filter((c) => !s.sequenceBy.includes(c));
  if (s.trackHistory) return candidates.filter((c) => s.trackHistory!.includes(c));
  return candidates.filter((c) => !(s.trackHistoryExcept ?? []).includes(c));
}

/** §2: a record becomes an event, or undefined when it is quarantined (null key or sequence, a value that does not fit). */
export function toEvent(s: ModelSpec, r: Rec): Event | undefined {
  if (s.fits && !s.fits(r)) return undefined;
  const seq = s.sequenceBy.map((c) => r[c] ?? null);
  if (seq.some((v) => v === null)) return undefined;
  const op: Op = s.isTruncate?.(r) ? TRUNCATE : s.isDelete?.(r) ? DELETE : UPSERT;
  const payload = payloadColumns(s).map((c) => r[c] ?? null);
  if (op === TRUNCATE) return { key: null, seq, op, payload };
  const key = s.keys.map((c) => r[c] ?? null);
  if (key.some((v) => v === null)) return undefined;
  return { key, seq, op, payload };
}

/** Exact identity of an event: key, sequence, operation and payload. */
export function identity(e: Event): string {
  return JSON.stringify([e.key, e.seq, e.op, e.payload]);
}

/** Canonical text of a payload (docs/decisions/0003-ties-ordered-by-canonical-text-and-counted.md): '0' for null, else '1' + text, joined by U+001F. */
export function canonicalText(payload: Val[]): string {
  return payload.map((v) => (v === null ? '0' : '1' + String(v))).join('\u001f');
}

export function compareVal(a: Val, b: Val): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function compareTuple(a: Val[], b: Val[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareVal(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/** §3 order: sequence, then upsert < delete < truncate, then the payload's canonical text. */
export function compareEvents(a: Event, b: Event): number {
  const c = compareTuple(a.seq, b.seq);
  if (c !== 0) return c;
  if (a.op !== b.op) return a.op - b.op;
  const x = canonicalText(a.payload);
  const y = canonicalText(b.payload);
  return x < y ? -1 : x > y ? 1 : 0;
}

interface Version {
  start: Val[];
  end: Val[] | null;
  values: Val[];
}

const sameValues = (a: Val[], b: Val[], idx: number[]) => idx.every((i) => a[i] === b[i]);

/** The §3 walk of one key's ordered events. Returns every version (zero-length ones included) and the live one. */
export function walk(s: ModelSpec, events: Event[]): { versions: Version[]; live: Version | null } {
  const payload = payloadColumns(s);
  const tracked = trackedColumns(s).map((c) => payload.indexOf(c));
  const versions: Version[] = [];
  let live: Version | null = null;
  let values: Val[] | null = null;
  for (const e of events) {
    if (e.op === UPSERT) {
      if (!live) {
        live = { start: e.seq, end: null, values: [...e.payload] };
        values = live.values;
        continue;
      }
      const next = e.payload.map((v, i) => (s.ignoreNullUpdates && v === null ? values![i]! : v));
      if (!sameValues(live.values, next, tracked)) {
        live.end = e.seq;
        versions.push(live);
        live = { start: e.seq, end: null, values: next };
      } else {
        live.values = next; // tracked columns are equal; the untracked ones change in place
      }
      values = next;
    } else {
      // delete or truncate
      if (live) {
        live.end = e.seq;
        versions.push(live);
      }
      live = null;
      values = null;
    }
  }
  if (live) versions.push(live);
  return { versions, live };
}

/** The set of events received so far, and the target it implies. */
export class Model {
  private readonly events = new Map<string, Event>();

  constructor(readonly spec: ModelSpec) {}

  /** Apply one commit; returns the counts the commit must report. */
  apply(batch: Rec[]): Counts {
    let quarantined = 0;
    const fresh = new Map<string, Event>();
    for (const r of batch) {
      const e = toEvent(this.spec, r);
      if (!e) {
        quarantined++;
        continue;
      }
      const id = identity(e);
      if (!this.events.has(id)) fresh.set(id, e);
    }
    for (const [id, e] of fresh) this.events.set(id, e);
    // docs/decisions/0003-ties-ordered-by-canonical-text-and-counted.md: fresh events sharing key and sequence with a different event.
    const all = [...this.events.values()];
    let ties = 0;
    for (const n of fresh.values()) {
      const kn = JSON.stringify(n.key);
      if (all.some((l) => JSON.stringify(l.key) === kn && compareTuple(l.seq, n.seq) === 0 && identity(l) !== identity(n))) ties++;
    }
    return {
      rowsRead: batch.length,
      eventsApplied: fresh.size,
      duplicates: batch.length - quarantined - fresh.size,
      quarantined,
      ties,
    };
  }

  /** The target rows in export order (keys, then start), shaped like readTargetWith's rows. */
  target(): Rec[] {
    const s = this.spec;
    const all = [...this.events.values()];
    const truncates = all.filter((e) => e.op === TRUNCATE);
    const byKey = new Map<string, { key: Val[]; events: Event[] }>();
    for (const e of all) {
      if (e.op === TRUNCATE) continue;
      const k = JSON.stringify(e.key);
      if (!byKey.has(k)) byKey.set(k, { key: e.key!, events: [] });
      byKey.get(k)!.events.push(e);
    }
    const keys = [...byKey.values()].sort((a, b) => compareTuple(a.key, b.key));
    const out = outputColumns(s);
    const payload = payloadColumns(s);
    const seqValue = (seq: Val[] | null): unknown => (seq === null ? null : s.sequenceBy.length === 1 ? seq[0] : Object.fromEntries(s.sequenceBy.map((c, i) => [c, seq[i]])));
    const row = (key: Val[], v: Version, before?: Version): Rec => {
      const r: Record<string, unknown> = {};
      for (const c of out) r[c] = s.keys.includes(c) ? key[s.keys.indexOf(c)]! : v.values[payload.indexOf(c)]!;
      const meets = before !== undefined && before.end !== null && compareTuple(before.end, v.start) === 0;
      for (const [of, as] of Object.entries(s.previousValues ?? {})) r[as] = meets ? before.values[payload.indexOf(of)]! : null;
      if (s.storedAs === 'scd2') {
        r.__START_AT = seqValue(v.start);
        r.__END_AT = seqValue(v.end);
      }
      return r as Rec;
    };
    const rows: Rec[] = [];
    for (const { key, events } of keys) {
      const ordered = [...events, ...truncates].sort(compareEvents);
      const { versions, live } = walk(s, ordered);
      if (s.storedAs === 'scd1') {
        if (live) rows.push(row(key, live));
      } else {
        // Zero-length versions are not rows: a version's previous one is the kept row before it.
        const kept = versions.filter((v) => v.end === null || compareTuple(v.start, v.end) !== 0);
        kept.forEach((v, i) => {
          rows.push(row(key, v, kept[i - 1]));
        });
      }
    }
    return rows;
  }
}
