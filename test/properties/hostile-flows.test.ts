/**
 * Hostile flows, on every engine: applyAsDeletes drawn from a grammar of valid booleans over the
 * record's columns, some mixed with hostile fragments (every quoting form of both engines,
 * comments, ";", parameters, subqueries, table and file functions, volatile functions, statement
 * break-outs). Every apply either
 * - refuses with one FLOW_INVALID line and changes nothing (every table the same), when the
 *   expression holds a hostile fragment, or
 * - applies exactly what a reference evaluation of the boolean (SQL's three-valued logic, in JS,
 *   over the generated records) says, when it is a valid boolean;
 * and the canary table `victim` and another target's tables survive unchanged either way.
 *
 * One database per engine for all runs (each run its own target); few runs on PostgreSQL.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, readTargetWith, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';
import { INJECTIONS, snapshotTables } from '../hostile-sql.js';
import { fcParams, PROPERTY_TIMEOUT_MS } from './arbitraries.js';

type Val = string | number | boolean | null;
type Rec = { id: number; ts: number; op: Val; a: Val; flag: Val; note: Val };
/** A boolean as SQL text and as its value on a record (null: unknown). */
interface Bool {
  sql: string;
  tokens: string[];
  eval(r: Rec): boolean | null;
}

const OPS = ['D', 'd', 'U', 'DELETE', "it's", 'a;b', '--x', '/*y*/', '$$'];
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
const col = (name: string) => fc.constantFrom(name, `"${name}"`);
/** The tokens a fragment may be put between: words, and string literals whole (a space inside one is text). */
const tok = (sql: string) => sql.match(/'(?:[^']|'')*'|[^ ]+/g) ?? [];
const bool = (sql: string, e: (r: Rec) => boolean | null): Bool => ({ sql, tokens: tok(sql), eval: e });

const and = (x: boolean | null, y: boolean | null) => (x === false || y === false ? false : x === null || y === null ? null : true);
const or = (x: boolean | null, y: boolean | null) => (x === true || y === true ? true : x === null || y === null ? null : false);
const not = (x: boolean | null) => (x === null ? null : !x);
const cmp = (v: Val, f: (v: string | number | boolean) => boolean) => (v === null ? null : f(v));

const atom: fc.Arbitrary<Bool> = fc.oneof(
  fc.tuple(col('op'), fc.constantFrom(...OPS, 'zz')).map(([c, v]) => bool(`${c} = ${lit(v)}`, (r) => cmp(r.op, (o) => o === v))),
  fc
    .tuple(col('op'), fc.uniqueArray(fc.constantFrom(...OPS), { minLength: 1, maxLength: 3 }))
    .map(([c, vs]) => bool(`${c} IN (${vs.map(lit).join(', ')})`, (r) => cmp(r.op, (o) => vs.includes(String(o))))),
  fc.tuple(col('op'), fc.constantFrom('d', 'delete', "it's")).map(([c, v]) => bool(`lower(${c}) = ${lit(v)}`, (r) => cmp(r.op, (o) => String(o).toLowerCase() === v))),
  fc
    .tuple(col('a'), fc.constantFrom('>', '=', '<>'), fc.integer({ min: 0, max: 2 }))
    .map(([c, o, n]) => bool(`${c} ${o} ${n}`, (r) => cmp(r.a, (a) => (o === '>' ? Number(a) > n : o === '=' ? a === n : a !== n)))),
  col('a').map((c) => bool(`${c} IS NULL`, (r) => r.a === null)),
  col('flag').map((c) => bool(`coalesce(${c}, false)`, (r) => r.flag === true)),
  col('flag').map((c) => bool(c, (r) => (r.flag === null ? null : Boolean(r.flag)))),
  fc.tuple(col('note'), fc.constantFrom('x', 'y z')).map(([c, v]) => bool(`${c} = ${lit(v)}`, (r) => cmp(r.note, (n) => n === v))),
  col('note').map((c) => bool(`length(${c}) > 1`, (r) => cmp(r.note, (n) => String(n).length > 1))),
);

const validBool: fc.Arbitrary<Bool> = fc.letrec<{ b: Bool }>((tie) => ({
  b: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    tie('b').map((x) => bool(`NOT ( ${x.sql} )`, (r) => not(x.eval(r)))),
    fc.tuple(tie('b'), tie('b')).map(([x, y]) => bool(`( ${x.sql} ) AND ( ${y.sql} )`, (r) => and(x.eval(r), y.eval(r)))),
    fc.tuple(tie('b'), tie('b')).map(([x, y]) => bool(`( ${x.sql} ) OR ( ${y.sql} )`, (r) => or(x.eval(r), y.eval(r)))),
    fc.tuple(tie('b'), fc.boolean()).map(([x, d]) => bool(`coalesce( ${x.sql} , ${d} )`, (r) => x.eval(r) ?? d)),
  ),
})).b;

/** Spellings one engine alone reads, or that hide what an expression holds: refused by their spelling. */
const MISSPELT = [`$$D$$`, `$t$D$t$`, `E'D'`, `E'\\''`, `e'\\x44'`, `U&'\\0044'`, `U&"op"`, `B'1'`, `X'44'`, `N'D'`, `/* c */`, `-- c\n`, `--`];

/** Pieces that make an expression more than a boolean over the record: the engine's own check refuses them. */
const OVERREACHING = [
  ...INJECTIONS,
  `;`,
  `; DROP TABLE victim`,
  `$1`,
  `(SELECT true)`,
  `EXISTS (SELECT 1)`,
  `(SELECT count(*) FROM victim) > 0`,
  `(SELECT count(*) FROM read_text('/etc/passwd')) > 0`,
  `read_text('/etc/passwd')`,
  `(SELECT count(*) FROM read_csv('/etc/passwd')) > 0`,
  `generate_series(1, 2) > 0`,
  `pg_read_file('/etc/passwd') <> ''`,
  `random() < 2`,
];

/** Every hostile fragment: each refused wherever it lands in an expression. */
const FRAGMENTS = [...MISSPELT, ...OVERREACHING];

interface Case {
  expr: string;
  /** The boolean the expression is, when it is one (no hostile fragment). */
  valid?: Bool;
}

const mixed = (fragments: string[]): fc.Arbitrary<Case> =>
  fc.tuple(validBool, fc.constantFrom(...fragments), fc.nat(), fc.constantFrom('alone', 'or', 'and', 'before', 'after', 'inside')).map(([b, f, at, how]) => {
    const i = at % (b.tokens.length + 1);
    const expr = {
      alone: f,
      or: `( ${b.sql} ) OR ( ${f} )`,
      and: `( ${b.sql} ) AND ( ${f} )`,
      before: `${f} ${b.sql}`,
      after: `${b.sql} ${f}`,
      inside: [...b.tokens.slice(0, i), f, ...b.tokens.slice(i)].join(' '),
    }[how];
    return { expr };
  });

const validCase = validBool.map((b): Case => ({ expr: b.sql, valid: b }));
const caseArb: fc.Arbitrary<Case> = fc.oneof(validCase, mixed(FRAGMENTS));

const value = <T>(xs: T[]) => fc.constantFrom(...xs);
const recordsArb: fc.Arbitrary<Rec[]> = fc
  .array(fc.record({ op: value<Val>([...OPS, null]), a: value<Val>([0, 1, 2, null]), flag: value<Val>([true, false, null]), note: value<Val>(['x', 'y z', null]) }), {
    minLength: 1,
    maxLength: 6,
  })
  // One record a key; the first has no null, so that every column is typed from it.
  .map((rs) => [{ op: 'U', a: 1, flag: false, note: 'x' }, ...rs].map((r, i) => ({ id: i + 1, ts: 1, ...r })));

const RUNS: Record<string, number> = { duckdb: 40, pglite: 30, postgres: 16 };
const BASE_ROWS = [{ id: 1, ts: 1, op: 'U', a: 1, flag: false, note: 'x' }];

/** A database with the canary table and another target: what a hostile flow must leave as it is. */
async function openWithBystanders(open: () => Promise<Driver>): Promise<Driver> {
  const driver = await open();
  await driver.run('CREATE TABLE victim (i INTEGER)');
  await driver.run('INSERT INTO victim VALUES (42)');
  await applyRows(driver, defineFlow({ target: 'base', keys: 'id', sequenceBy: 'ts' }), BASE_ROWS);
  return driver;
}

for (const engine of engines) {
  describe(`${engine.name}: hostile flows`, () => {
    let driver: Driver;
    let checker: Driver;
    let runs = 0;
    /** Targets applied by earlier runs: their own tables are listed, not read (the snapshot stays small). */
    const applied = new Set<string>();
    const earlier = (table: string) => applied.has(table.replace(/^_scd_/, '').replace(/_(current|events|quarantine|changes|keys)$/, ''));
    beforeAll(async () => {
      driver = await openWithBystanders(engine.open);
      checker = await openWithBystanders(engine.open);
    });
    afterAll(async () => {
      await driver?.close();
      await checker?.close();
    });

    /** The canary and the other target's own tables (compared also after an apply that succeeds). */
    const bystanders = (s: Record<string, string[]>) => Object.fromEntries(Object.entries(s).filter(([t]) => t === 'victim' || t === 'base' || t.startsWith('_scd_base_')));

    it(
      'every apply refuses with one line and changes nothing, or applies exactly what the boolean says',
      async () => {
        await fc.assert(
          fc.asyncProperty(caseArb, recordsArb, async ({ expr, valid }, records) => {
            const target = `t${++runs}`;
            const flow = defineFlow({ target, keys: 'id', sequenceBy: 'ts', applyAsDeletes: expr });
            const before = await snapshotTables(driver, earlier);
            const outcome = await applyRows(driver, flow, records).then(
              () => undefined,
              (e: unknown) => e,
            );
            const after = await snapshotTables(driver, earlier);
            expect(bystanders(after), expr).toEqual(bystanders(before));
            if (!valid) {
              expect(outcome, `a hostile expression is refused: ${expr}`).toBeInstanceOf(ScdError);
              const e = outcome as ScdError;
              expect([e.code, e.field], e.oneLine()).toEqual(['FLOW_INVALID', 'applyAsDeletes']);
              expect(e.oneLine()).not.toMatch(/[\r\n]/);
              expect(after, `a refused apply changes nothing: ${expr}`).toEqual(before);
              return;
            }
            expect(outcome, `a valid boolean applies: ${expr}`).toBeUndefined();
            applied.add(target);
            // One record a key, one batch: a key stays exactly when its record is not a delete.
            const kept = records.filter((r) => valid.eval(r) !== true).map((r) => r.id);
            const rows = await readTargetWith(driver, flow);
            expect(
              rows.map((r) => Number(r.id)).sort((x, y) => x - y),
              expr,
            ).toEqual(kept);
          }),
          fcParams<[Case, Rec[]]>(RUNS[engine.name] ?? 10, engine.name),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      "the engine's own check alone refuses every expression with more than spelling in it, and changes nothing",
      async () => {
        const columns = ((await checker.columns('base')) ?? []).filter((c) => Object.keys(BASE_ROWS[0]!).includes(c.name));
        await fc.assert(
          fc.asyncProperty(fc.oneof(validCase, mixed(OVERREACHING)), async ({ expr, valid }) => {
            const before = await snapshotTables(checker);
            const problem = await checker.checkExpression(expr, columns);
            expect(await snapshotTables(checker), expr).toEqual(before);
            if (valid) expect(problem, expr).toBeUndefined();
            else expect(problem, expr).toBeDefined();
          }),
          fcParams<[Case]>(3 * (RUNS[engine.name] ?? 10), engine.name),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  });
}
