/**
 * The reference model checked by hand against SEMANTICS §3's own examples, so that the properties
 * compare the engine with something that is itself right.
 */
import { describe, expect, it } from 'vitest';
import { Model, type ModelSpec, type Rec } from './model.js';

const spec = (over: Partial<ModelSpec> = {}): ModelSpec => ({
  sourceColumns: ['id', 'ts', 'op', 'v', 'w'],
  keys: ['id'],
  sequenceBy: ['ts'],
  isDelete: (r) => r.op === 'D',
  isTruncate: (r) => r.op === 'T',
  exceptColumns: ['op'],
  storedAs: 'scd2',
  ignoreNullUpdates: false,
  ...over,
});
const rec = (id: number | null, ts: number | null, op: string, v: string | null = null, w: string | null = null): Rec => ({ id, ts, op, v, w });
const run = (s: ModelSpec, ...batches: Rec[][]) => {
  const m = new Model(s);
  const counts = batches.map((b) => m.apply(b));
  return { rows: m.target(), counts };
};
const row = (id: number, ts: number, v: string | null, w: string | null, start: number, end: number | null) => ({ id, ts, v, w, __START_AT: start, __END_AT: end });

describe('reference model', () => {
  it('a tracked change closes the version; a no-change upsert updates in place', () => {
    const { rows } = run(spec({ trackHistory: ['v'] }), [rec(1, 1, 'U', 'a', 'x'), rec(1, 2, 'U', 'a', 'y'), rec(1, 3, 'U', 'b', 'y')]);
    expect(rows).toEqual([row(1, 2, 'a', 'y', 1, 3), row(1, 3, 'b', 'y', 3, null)]);
  });

  it('a late update splits the version it falls in; a late delete closes the one live at its sequence', () => {
    const late = run(spec(), [rec(1, 1, 'U', 'a'), rec(1, 5, 'U', 'c')], [rec(1, 3, 'U', 'b')]).rows;
    expect(late).toEqual([row(1, 1, 'a', null, 1, 3), row(1, 3, 'b', null, 3, 5), row(1, 5, 'c', null, 5, null)]);
    const del = run(spec(), [rec(1, 1, 'U', 'a'), rec(1, 5, 'U', 'c')], [rec(1, 3, 'D')]).rows;
    expect(del).toEqual([row(1, 1, 'a', null, 1, 3), row(1, 5, 'c', null, 5, null)]);
    // SCD1: a late upsert older than a delete does not bring the key back.
    expect(run(spec({ storedAs: 'scd1' }), [rec(1, 1, 'U', 'a'), rec(1, 5, 'D')], [rec(1, 3, 'U', 'b')]).rows).toEqual([]);
  });

  it('ties: upsert before delete before truncate, then canonical text; zero-length versions vanish', () => {
    expect(run(spec(), [rec(1, 1, 'U', 'a'), rec(1, 2, 'D'), rec(1, 2, 'U', 'b')]).rows).toEqual([row(1, 1, 'a', null, 1, 2)]);
    // Both upserts at 2: 'b' < 'c' by canonical text, so 'c' is last and [2,2) of 'b' is dropped.
    const { rows, counts } = run(spec(), [rec(1, 1, 'U', 'a'), rec(1, 2, 'U', 'c'), rec(1, 2, 'U', 'b')]);
    expect(rows).toEqual([row(1, 1, 'a', null, 1, 2), row(1, 2, 'c', null, 2, null)]);
    expect(counts[0]!.ties).toBe(2);
    // A null sorts before any value ('0' < '1').
    expect(run(spec(), [rec(1, 2, 'U', 'a'), rec(1, 2, 'U', null)]).rows).toEqual([row(1, 2, 'a', null, 2, null)]);
  });

  it('truncates close every key, also keys first seen later', () => {
    const { rows } = run(spec(), [rec(1, 1, 'U', 'a'), rec(null, 4, 'T')], [rec(2, 2, 'U', 'b'), rec(2, 6, 'U', 'c')]);
    expect(rows).toEqual([row(1, 1, 'a', null, 1, 4), row(2, 2, 'b', null, 2, 4), row(2, 6, 'c', null, 6, null)]);
  });

  it('ignoreNullUpdates keeps values, and restarts after a delete', () => {
    const s = spec({ ignoreNullUpdates: true });
    const { rows } = run(s, [rec(1, 1, 'U', 'a', 'x'), rec(1, 2, 'U', null, 'y'), rec(1, 3, 'D'), rec(1, 4, 'U', null, 'z')]);
    expect(rows).toEqual([row(1, 1, 'a', 'x', 1, 2), row(1, 2, 'a', 'y', 2, 3), row(1, 4, null, 'z', 4, null)]);
  });

  it('counts: quarantine, exact duplicates, new events only', () => {
    const { counts } = run(spec(), [rec(1, 1, 'U', 'a'), rec(1, 1, 'U', 'a'), rec(null, 1, 'U', 'a'), rec(1, null, 'U'), rec(null, 2, 'T')], [rec(1, 1, 'U', 'a'), rec(2, 2, 'T')]);
    expect(counts[0]).toEqual({ rowsRead: 5, eventsApplied: 2, duplicates: 1, quarantined: 2, ties: 0 });
    expect(counts[1]).toEqual({ rowsRead: 2, eventsApplied: 0, duplicates: 2, quarantined: 0, ties: 0 });
  });
});
