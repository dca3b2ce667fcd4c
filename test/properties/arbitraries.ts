/**
 * fast-check generators for change streams and flows.
 *
 * Every record carries every source column (null where absent), and each column has one JSON
 * type: id, seq, lsn, a, c are integers; reg, op, b are strings of letters. A "seed" record with
 * no null is part of every stream and of the first batch applied, so the engine infers
 * BIGINT/VARCHAR for every column from the first input.
 */
import fc from 'fast-check';
import type { FlowInput } from '../../src/index.js';
import type { ModelSpec, Rec, Val } from './model.js';

/** Every source column; each scenario puts them in a random source order. */
export const ALL_COLUMNS = ['id', 'reg', 'seq', 'lsn', 'op', 'a', 'b', 'c'] as const;
type Column = (typeof ALL_COLUMNS)[number];

const DOMAIN: Record<Column, Val[]> = {
  id: [1, 2, 3],
  reg: ['n', 's'],
  seq: [0, 1, 2, 3, 4, 5, 6, 7, 8],
  lsn: [0, 1, 2],
  op: ['U', 'I', 'D', 'T'],
  a: [1, 2, 3],
  b: ['x', 'y'],
  c: [0, 1],
};

export interface Scenario {
  flow: FlowInput;
  spec: ModelSpec;
  /** The whole stream, in arrival order. */
  records: Rec[];
  /** A split of the records into non-empty batches, in the order they are applied. */
  batches: Rec[][];
}

export interface ScenarioOptions {
  storedAs: 'scd1' | 'scd2';
  /** sequenceBy: ['seq', 'lsn'] instead of 'seq'; random (one run in three) when absent. */
  tupleSequence?: boolean;
  /** scd2: keep the previous value of a random non-empty subset of the tracked-or-not payload columns (previousValues). */
  previousValues?: boolean;
}

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
/** A value of the column's domain, or null (weight 1 in `1 + nonNullWeight`). */
const valueOfColumn = (c: Column, nonNullWeight: number): fc.Arbitrary<Val> =>
  fc.oneof({ arbitrary: pick(DOMAIN[c]), weight: nonNullWeight }, { arbitrary: fc.constant(null), weight: 1 });

const opArb: fc.Arbitrary<Val> = fc.oneof(
  { arbitrary: fc.constant('U'), weight: 8 },
  { arbitrary: fc.constant('I'), weight: 1 },
  { arbitrary: fc.constant('D'), weight: 4 },
  { arbitrary: fc.constant('T'), weight: 1 },
);

/**
 * One ordinary record: keys and sequence rarely null (→ quarantine), payload often null. A 'T'
 * record often has no key (a truncate needs none; docs/decisions/0002-truncates-ignore-the-key.md: it is not quarantined).
 */
const recordArb: fc.Arbitrary<Rec> = fc
  .tuple(
    fc.record({
      id: valueOfColumn('id', 30),
      reg: valueOfColumn('reg', 30),
      seq: valueOfColumn('seq', 30),
      lsn: valueOfColumn('lsn', 30),
      op: opArb,
      a: valueOfColumn('a', 3),
      b: valueOfColumn('b', 3),
      c: valueOfColumn('c', 3),
    }),
    fc.boolean(),
  )
  .map(([r, keyless]) => (r.op === 'T' && keyless ? { ...r, id: null, reg: null } : r));

/** The seed: every column non-null, so the first batch fixes every column's type. */
const seedArb: fc.Arbitrary<Rec> = fc.record({
  id: pick(DOMAIN.id),
  reg: pick(DOMAIN.reg),
  seq: pick(DOMAIN.seq),
  lsn: pick(DOMAIN.lsn),
  op: pick(['U', 'I', 'D']),
  a: pick(DOMAIN.a),
  b: pick(DOMAIN.b),
  c: pick(DOMAIN.c),
});

const subsetOf = <T>(xs: readonly T[]) => fc.subarray([...xs]);

const flowOptionsArb = fc.record({
  compositeKey: fc.boolean(),
  deletes: fc.oneof({ arbitrary: fc.constant(true), weight: 5 }, { arbitrary: fc.constant(false), weight: 1 }),
  truncates: fc.boolean(),
  /** 0: all columns, 1: exceptColumns, 2: columns */
  projection: fc.constantFrom(0, 0, 1, 1, 2),
  projected: subsetOf(['reg', 'seq', 'lsn', 'op', 'a', 'b', 'c'] as Column[]),
  /** 0: track all, 1: trackHistory, 2: trackHistoryExcept */
  tracking: fc.constantFrom(0, 0, 1, 2),
  trackList: subsetOf(['reg', 'lsn', 'op', 'a', 'b', 'c'] as Column[]),
  /** previousValues: the columns to keep the previous value of (those that are payload, not sequence). */
  previousList: subsetOf(['reg', 'lsn', 'op', 'a', 'b', 'c'] as Column[]),
  ignoreNullUpdates: fc.boolean(),
  tupleSequence: fc.oneof({ arbitrary: fc.constant(false), weight: 2 }, { arbitrary: fc.constant(true), weight: 1 }),
  columnOrder: fc.array(fc.nat(99), { minLength: ALL_COLUMNS.length, maxLength: ALL_COLUMNS.length }),
});

const streamArb = fc.record({
  seed: seedArb,
  seedAt: fc.nat(40),
  rest: fc.array(recordArb, { minLength: 2, maxLength: 24, size: 'medium' }),
  /** [from, to]: copy record `from` (exact duplicate) and insert it at `to`. */
  duplicates: fc.array(fc.tuple(fc.nat(40), fc.nat(40)), { maxLength: 4 }),
  /** [from, seq, to]: copy record `from` at another sequence (same values later or earlier: a re-delivery). */
  restamps: fc.array(fc.tuple(fc.nat(40), pick(DOMAIN.seq), fc.nat(40)), { maxLength: 4 }),
  /** [from, column, to]: copy record `from` with one payload column changed (a tie). */
  variants: fc.array(fc.tuple(fc.nat(40), fc.constantFrom<Column>('a', 'b', 'c', 'op'), fc.nat(40)), { maxLength: 3 }),
  /** Batch split: shuffle ranks of the records, cut points, and the order the batches are applied. */
  shuffle: fc.array(fc.nat(1000), { maxLength: 40 }),
  cuts: fc.array(fc.nat(40), { maxLength: 3 }),
  order: fc.array(fc.nat(1000), { maxLength: 4 }),
});

function variantOf(r: Rec, c: Column): Rec {
  const dom = [...DOMAIN[c], null];
  const i = dom.indexOf(r[c] ?? null);
  return { ...r, [c]: dom[(i + 1) % dom.length]! };
}

type ValueOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

function buildFlow(o: ValueOf<typeof flowOptionsArb>, opts: ScenarioOptions): { flow: FlowInput; spec: ModelSpec } {
  const keys = o.compositeKey ? ['id', 'reg'] : ['id'];
  const sequenceBy = (opts.tupleSequence ?? o.tupleSequence) ? ['seq', 'lsn'] : ['seq'];
  const sourceColumns = ALL_COLUMNS.map((c, i) => ({ c, r: o.columnOrder[i]! }))
    .sort((x, y) => x.r - y.r)
    .map((x) => x.c as string);
  const nonKey: string[] = o.projected.filter((c) => !keys.includes(c));
  const columns = o.projection === 2 && nonKey.length > 0 ? nonKey : undefined;
  const exceptColumns = o.projection === 1 && nonKey.length > 0 ? nonKey : undefined;
  const output = sourceColumns.filter((c) => keys.includes(c) || (columns ? columns.includes(c) : !(exceptColumns ?? []).includes(c)));
  const candidates = output.filter((c) => !keys.includes(c) && !sequenceBy.includes(c));
  const list: string[] = o.trackList.filter((c) => candidates.includes(c));
  const scd2 = opts.storedAs === 'scd2';
  const trackHistory = scd2 && o.tracking === 1 && list.length > 0 ? list : undefined;
  const trackHistoryExcept = scd2 && o.tracking === 2 && list.length > 0 ? list : undefined;
  // Every payload column but the sequence's may keep its previous value (one at least, when asked).
  const chosen = o.previousList.filter((c) => candidates.includes(c));
  const previousCols = scd2 && opts.previousValues ? (chosen.length ? chosen : candidates.slice(0, 1)) : [];
  const previousValues = previousCols.length ? Object.fromEntries(previousCols.map((c) => [c, `p_${c}`])) : undefined;
  const flow: FlowInput = {
    target: 'dim',
    keys,
    sequenceBy: sequenceBy.length === 1 ? sequenceBy[0]! : sequenceBy,
    storedAs: opts.storedAs,
    ignoreNullUpdates: o.ignoreNullUpdates,
    ...(o.deletes ? { applyAsDeletes: "op = 'D'" } : {}),
    ...(o.truncates ? { applyAsTruncates: "op = 'T'" } : {}),
    ...(columns ? { columns } : {}),
    ...(exceptColumns ? { exceptColumns } : {}),
    ...(trackHistory ? { trackHistory } : {}),
    ...(trackHistoryExcept ? { trackHistoryExcept } : {}),
    ...(previousValues ? { previousValues } : {}),
  };
  const spec: ModelSpec = {
    sourceColumns,
    keys,
    sequenceBy,
    isDelete: o.deletes ? (r) => r.op === 'D' : undefined,
    isTruncate: o.truncates ? (r) => r.op === 'T' : undefined,
    columns,
    exceptColumns,
    storedAs: opts.storedAs,
    trackHistory,
    trackHistoryExcept,
    ignoreNullUpdates: o.ignoreNullUpdates,
    previousValues,
  };
  return { flow, spec };
}

/** A batch fixes every column's type when each column has a non-null value in it. */
export function typesBatch(batch: Rec[]): boolean {
  return batch.length > 0 && ALL_COLUMNS.every((c) => batch.some((r) => r[c] !== null && r[c] !== undefined));
}

function buildStream(s: ValueOf<typeof streamArb>, sourceColumns: string[]): { records: Rec[]; batches: Rec[][] } {
  const base = [...s.rest];
  base.splice(s.seedAt % (base.length + 1), 0, s.seed);
  const records = [...base];
  for (const [from, c, to] of s.variants) records.splice(to % (records.length + 1), 0, variantOf(base[from % base.length]!, c));
  for (const [from, seq, to] of s.restamps) records.splice(to % (records.length + 1), 0, { ...base[from % base.length]!, seq });
  for (const [from, to] of s.duplicates) records.splice(to % (records.length + 1), 0, { ...records[from % records.length]! });
  // Every record has the same columns, in the stream's source order.
  const ordered = records.map((r) => Object.fromEntries(sourceColumns.map((c) => [c, r[c] ?? null])) as Rec);

  const rank = (i: number) => s.shuffle[i] ?? i;
  const shuffled = ordered
    .map((r, i) => ({ r, k: rank(i), i }))
    .sort((x, y) => x.k - y.k || x.i - y.i)
    .map((x) => x.r);
  const cuts = [...new Set(s.cuts.map((c) => c % shuffled.length).filter((c) => c > 0))].sort((x, y) => x - y);
  const chunks: Rec[][] = [];
  let at = 0;
  for (const c of [...cuts, shuffled.length]) {
    chunks.push(shuffled.slice(at, c));
    at = c;
  }
  const batches = chunks
    .map((b, i) => ({ b, k: s.order[i] ?? i, i }))
    .sort((x, y) => x.k - y.k || x.i - y.i)
    .map((x) => x.b);
  // The first batch applied must fix the column types (the seed guarantees one such batch).
  const first = batches.findIndex(typesBatch);
  batches.unshift(...batches.splice(first, 1));
  return { records: ordered, batches };
}

export function scenarioArb(opts: ScenarioOptions): fc.Arbitrary<Scenario> {
  return fc.record({ o: flowOptionsArb, s: streamArb }).map(({ o, s }) => {
    const { flow, spec } = buildFlow(o, opts);
    const sc: Scenario = { flow, spec, ...buildStream(s, spec.sourceColumns) };
    // fast-check prints counterexamples with this.
    Object.defineProperty(sc, fc.toStringMethod, { value: () => describeScenario(sc), enumerable: false });
    return sc;
  });
}

/** A short, readable description of a scenario for failure messages. */
export function describeScenario(sc: Scenario): string {
  const line = (r: Rec) => JSON.stringify(r);
  return [`flow: ${JSON.stringify(sc.flow)}`, ...sc.batches.map((b, i) => `batch ${i + 1}:\n  ${b.map(line).join('\n  ')}`)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Running scenarios (shared by the property files)

/**
 * fast-check parameters: random seed by default (fast-check prints seed and path on failure);
 * FC_SEED / FC_PATH replay a failure, FC_RUNS scales the number of runs (e.g. FC_RUNS=10; raise
 * FC_TIME_LIMIT_MS with it).
 */
const TIME_LIMIT_MS = Number(process.env.FC_TIME_LIMIT_MS ?? 60_000);
/** The vitest timeout of a property: its time limit plus room for the run in progress. */
export const PROPERTY_TIMEOUT_MS = TIME_LIMIT_MS + 120_000;

export function fcParams<Ts extends unknown[] = [Scenario]>(numRuns: number, engine = 'duckdb', minRuns = 3): fc.Parameters<Ts> {
  // PostgreSQL engines cost several times DuckDB's per apply: fewer runs keep the suite's time
  // bounded (the same properties, the same generators; FC_RUNS scales every engine).
  const scale = Number(process.env.FC_RUNS ?? 1) * (engine === 'duckdb' ? 1 : 0.5);
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  return {
    numRuns: Math.max(minRuns, Math.round(numRuns * scale)),
    // Shrinking runs the engine many times; stop it (keeping the smallest failure so far) well
    // before the test's timeout, so a failure is always reported rather than timed out.
    skipAllAfterTimeLimit: TIME_LIMIT_MS,
    ...(seed === undefined ? {} : { seed, ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) }),
  };
}

/** The scenario kinds every property runs on (each with single and tuple sequences). */
export const KINDS: Array<ScenarioOptions & { name: string }> = [
  { name: 'scd2', storedAs: 'scd2' },
  { name: 'scd1', storedAs: 'scd1' },
  // SCD type 3 beside type 2: every key is walked from the log (keys-sql.ts), previous values lagged.
  { name: 'scd2 with previousValues', storedAs: 'scd2', previousValues: true },
];
