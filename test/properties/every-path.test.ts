/**
 * Every way in, and the rebuild, give the model's rows — for the values change data really holds
 * (./wide-values.ts: zoned, naive and date sequences, big integers, exact decimals, doubles at the
 * edges, a number beyond a double, unicode and empty strings, nulls everywhere).
 *
 * Each scenario's batches enter a fresh target by every path a user walks, one commit per batch:
 * - `--input`: each batch's file is named (`scd apply FLOW --input FILE`);
 * - `landing`: each batch lands as a file in the flow's source folder, then the folder is applied
 *   (`scd apply FLOW`);
 * - `landing --each`: every batch lands first, then one apply commits each file (`scd apply FLOW --each`);
 * - `rows`: the library's rows (`applyRows`), as JS values (BigInt, -0, Date, ±Infinity);
 * - `scd --input DIR --each` (DuckDB): the CLI's own command, in-process, on a database file;
 * - `scd apply --watch` (DuckDB): the watcher, in-process, each batch landing once the one before
 *   is committed, stopped after the last.
 * After its last commit each path's target is rebuilt from its log (`rebuild`). Every commit's
 * counts, the target before the rebuild and after it (read back exactly, as NDJSON) and its
 * column order (the first applied record's, as written; records may write their keys in any
 * order) must be the model's. On `--input`, the target as of each commit (time travel, from the
 * change feed) is the model's after that commit, and the first batch applied again after the
 * rebuild changes nothing. All failing paths are reported together.
 *
 * FC_RUNS scales the number of cases (arbitraries.ts fcParams).
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { watch } from '../../src/cli/watch.js';
import {
  type ApplyResult,
  applyFiles,
  applyRows,
  applySourceWith,
  type Driver,
  defineFlow,
  type Flow,
  loadFlowFile,
  rebuild,
  resolveInputs,
  targetQuery,
  versionQuery,
  writeRows,
} from '../../src/index.js';
import { scdInProcess } from '../cli-in-process.js';
import { engines, type TestEngine } from '../engines.js';
import { fcParams, KINDS, PROPERTY_TIMEOUT_MS } from './arbitraries.js';
import { type Counts, Model } from './model.js';
import { canonOn, canonRow, describeWide, parseJsonExact, sortedRows, type WideRecord, type WideScenario, wideScenarioArb } from './wide-values.js';

const RUNS = 3;

interface PathRun {
  /** Each commit's counts, in order. */
  counts: Counts[];
  /** The target after the last commit, and after the rebuild: canonical rows in the engine's column order. */
  before: Array<Record<string, unknown>>;
  after: Array<Record<string, unknown>>;
  /** `--input` only: the target as of each commit (time travel, from the change feed), read before the rebuild. */
  asOf?: Array<Array<Record<string, unknown>>>;
  /** `--input` only: the first batch applied again after the rebuild — its counts and the target then. */
  replay?: { counts: Counts & { versionsAdded: number; versionsChanged: number; versionsRemoved: number }; rows: Array<Record<string, unknown>> };
}

const fileOf = (batch: WideRecord[]) => batch.map((r) => r.line).join('\n') + '\n';
const countsOf = (r: ApplyResult): Counts => ({ rowsRead: r.rowsRead, eventsApplied: r.eventsApplied, duplicates: r.duplicates, quarantined: r.quarantined, ties: r.ties });

/** The target as the engine stores it, read back exactly (NDJSON, numbers as written) into canonical rows. */
async function readExact(driver: Driver, flow: Flow, sc: WideScenario, dir: string, version?: number): Promise<Array<Record<string, unknown>>> {
  const out = path.join(dir, `read-${Math.random().toString(36).slice(2)}.ndjson`);
  await writeRows(driver, version === undefined ? await targetQuery(driver, flow) : await versionQuery(driver, flow, version), { format: 'ndjson', out });
  return readNdjson(out, sc);
}

function readNdjson(file: string, sc: WideScenario): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => canonRow(sc.kinds, parseJsonExact(l) as Record<string, unknown>));
}

/** One path on a fresh database: commit every batch its way, then rebuild. */
async function onEngine(
  engine: TestEngine,
  sc: WideScenario,
  dir: string,
  commit: (driver: Driver, flow: Flow) => Promise<ApplyResult[]>,
  source?: string,
  history?: { replay: (driver: Driver, flow: Flow) => Promise<ApplyResult> },
): Promise<PathRun> {
  const flow = defineFlow({ ...sc.flow, ...(source ? { source: { path: source } } : {}) });
  const driver = await engine.open();
  try {
    const results = await commit(driver, flow);
    const before = await readExact(driver, flow, sc, dir);
    const asOf: PathRun['asOf'] = history ? [] : undefined;
    for (let v = 1; asOf && v <= results.length; v++) asOf.push(await readExact(driver, flow, sc, dir, v));
    await rebuild(driver, flow);
    const after = await readExact(driver, flow, sc, dir);
    if (!history) return { counts: results.map(countsOf), before, after };
    const r = await history.replay(driver, flow);
    const replay = {
      counts: { ...countsOf(r), versionsAdded: r.versionsAdded, versionsChanged: r.versionsChanged, versionsRemoved: r.versionsRemoved },
      rows: await readExact(driver, flow, sc, dir),
    };
    return { counts: results.map(countsOf), before, after, asOf, replay };
  } finally {
    await driver.close();
  }
}

type Paths = Record<string, (sc: WideScenario, dir: string) => Promise<PathRun>>;

function pathsOf(engine: TestEngine): Paths {
  const paths: Paths = {
    '--input': (sc, dir) =>
      onEngine(
        engine,
        sc,
        dir,
        async (driver, flow) => {
          const results: ApplyResult[] = [];
          for (const [i, b] of sc.batches.entries()) {
            const file = path.join(dir, `input-${i}.ndjson`);
            writeFileSync(file, fileOf(b));
            results.push(await applyFiles(driver, flow, resolveInputs([file])));
          }
          return results;
        },
        undefined,
        { replay: (driver, flow) => applyFiles(driver, flow, resolveInputs([path.join(dir, 'input-0.ndjson')])) },
      ),
    landing: (sc, dir) => {
      const land = path.join(dir, 'land');
      mkdirSync(land);
      return onEngine(
        engine,
        sc,
        dir,
        async (driver, flow) => {
          const results: ApplyResult[] = [];
          for (const [i, b] of sc.batches.entries()) {
            writeFileSync(path.join(land, `b${String(i).padStart(3, '0')}.ndjson`), fileOf(b));
            results.push(...(await applySourceWith(driver, flow)).results);
          }
          return results;
        },
        land,
      );
    },
    'landing --each': (sc, dir) => {
      const land = path.join(dir, 'land-each');
      mkdirSync(land);
      sc.batches.forEach((b, i) => {
        writeFileSync(path.join(land, `b${String(i).padStart(3, '0')}.ndjson`), fileOf(b));
      });
      return onEngine(engine, sc, dir, async (driver, flow) => (await applySourceWith(driver, flow, { each: true })).results, land);
    },
    rows: (sc, dir) =>
      onEngine(engine, sc, dir, async (driver, flow) => {
        const results: ApplyResult[] = [];
        for (const b of sc.batches)
          results.push(
            await applyRows(
              driver,
              flow,
              b.map((r) => r.row),
            ),
          );
        return results;
      }),
  };
  if (engine.name === 'duckdb') {
    paths['scd apply --input DIR --each'] = cliEach;
    paths['scd apply --watch'] = cliWatch;
  }
  return paths;
}

/** How long a watcher may take over one case before the path is reported as stuck. */
const WATCH_LIMIT_MS = 120_000;

/**
 * `scd apply FLOW --watch` (its watcher, in-process, on a DuckDB file): each batch lands in the
 * source folder only once the watcher has committed the one before, so one file is one commit as
 * on the other paths; after the last commit the watcher is stopped (as Ctrl-C stops it), then
 * `scd export --out`, `scd rebuild`, `scd export --out`.
 */
async function cliWatch(sc: WideScenario, dir: string): Promise<PathRun> {
  const land = path.join(dir, 'watch-land');
  mkdirSync(land);
  const flowFile = path.join(dir, 'watch-flow.json');
  writeFileSync(flowFile, JSON.stringify({ ...sc.flow, database: path.join(dir, 'watch.duckdb'), source: { path: land } }));
  const counts: Counts[] = [];
  const stop = new AbortController();
  let landed = 0;
  const landNext = () => {
    writeFileSync(path.join(land, `b${String(landed).padStart(3, '0')}.ndjson`), fileOf(sc.batches[landed]!));
    landed++;
  };
  landNext();
  const stuck = setTimeout(() => stop.abort(), WATCH_LIMIT_MS);
  try {
    await watch(loadFlowFile(flowFile), {
      intervalMs: 20,
      each: false,
      signal: stop.signal,
      print: (r) => {
        counts.push(countsOf(r));
        if (landed < sc.batches.length) landNext();
        else stop.abort();
      },
    });
  } finally {
    clearTimeout(stuck);
  }
  if (counts.length < sc.batches.length) throw new Error(`the watcher committed ${counts.length} of ${sc.batches.length} batches in ${WATCH_LIMIT_MS / 1000} s`);
  const scd = async (...args: string[]) => {
    const r = await scdInProcess(args);
    if (r.code !== 0) throw new Error(`scd ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
  };
  await scd('export', flowFile, '--out', path.join(dir, 'watch-before.ndjson'));
  await scd('rebuild', flowFile, '--json');
  await scd('export', flowFile, '--out', path.join(dir, 'watch-after.ndjson'));
  return { counts, before: readNdjson(path.join(dir, 'watch-before.ndjson'), sc), after: readNdjson(path.join(dir, 'watch-after.ndjson'), sc) };
}

/** `scd apply FLOW --input DIR --each`, `scd rebuild`, `scd export --out`, in-process on a DuckDB file. */
async function cliEach(sc: WideScenario, dir: string): Promise<PathRun> {
  const files = path.join(dir, 'cli-in');
  mkdirSync(files);
  sc.batches.forEach((b, i) => {
    writeFileSync(path.join(files, `b${String(i).padStart(3, '0')}.ndjson`), fileOf(b));
  });
  const flowFile = path.join(dir, 'flow.json');
  writeFileSync(flowFile, JSON.stringify({ ...sc.flow, database: path.join(dir, 'cli.duckdb') }));
  const scd = async (...args: string[]) => {
    const r = await scdInProcess(args);
    if (r.code !== 0) throw new Error(`scd ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  };
  const applied = await scd('apply', flowFile, '--input', files, '--each', '--json');
  const counts = applied
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => countsOf(JSON.parse(l) as ApplyResult));
  await scd('export', flowFile, '--out', path.join(dir, 'cli-before.ndjson'));
  await scd('rebuild', flowFile, '--json');
  await scd('export', flowFile, '--out', path.join(dir, 'cli-after.ndjson'));
  return { counts, before: readNdjson(path.join(dir, 'cli-before.ndjson'), sc), after: readNdjson(path.join(dir, 'cli-after.ndjson'), sc) };
}

/** What is wrong with one path's run, against the model (empty: nothing). */
function problemsOf(
  name: string,
  run: PathRun,
  want: { counts: Counts[]; rows: Array<Record<string, unknown>>; columns: string[]; asOf: Array<Array<Record<string, unknown>>> },
  shown: (cols: string[]) => string[],
): string[] {
  const problems: string[] = [];
  const show = (x: unknown) => JSON.stringify(x);
  run.counts.forEach((c, i) => {
    if (show(c) !== show(want.counts[i])) problems.push(`${name}: commit ${i + 1} counted ${show(c)}, the model ${show(want.counts[i])}`);
  });
  if (run.counts.length !== want.counts.length) problems.push(`${name}: ${run.counts.length} commits, not ${want.counts.length}`);
  const expected = sortedRows(want.rows.map((r) => sortKeys(r)));
  for (const [when, rows] of [
    ['after its commits', run.before],
    ['after the rebuild', run.after],
  ] as const) {
    const got = sortedRows(rows.map((r) => sortKeys(r)));
    if (show(got) !== show(expected))
      problems.push(
        `${name}: the target ${when} is not the model's:\n    got      ${got.map(show).join('\n             ')}\n    expected ${expected.map(show).join('\n             ')}`,
      );
    if (rows[0] && show(shown(Object.keys(rows[0]))) !== show(shown(want.columns)))
      problems.push(`${name}: the target's columns ${when} are ${show(Object.keys(rows[0]))}, not ${show(want.columns)}`);
  }
  run.asOf?.forEach((rows, i) => {
    const got = sortedRows(rows.map((r) => sortKeys(r)));
    const as = sortedRows(want.asOf[i]!.map((r) => sortKeys(r)));
    if (show(got) !== show(as))
      problems.push(
        `${name}: the target as of commit ${i + 1} (time travel) is not the model's:\n    got      ${got.map(show).join('\n             ')}\n    expected ${as.map(show).join('\n             ')}`,
      );
  });
  if (run.replay) {
    const { eventsApplied, versionsAdded, versionsChanged, versionsRemoved } = run.replay.counts;
    if (eventsApplied + versionsAdded + versionsChanged + versionsRemoved !== 0)
      problems.push(`${name}: the first batch applied again changed something: ${show(run.replay.counts)}`);
    if (show(sortedRows(run.replay.rows.map((r) => sortKeys(r)))) !== show(expected)) problems.push(`${name}: the first batch applied again changed the target`);
  }
  return problems;
}

const sortKeys = (r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)));

for (const engine of engines) {
  describe(`${engine.name}: every path in, and the rebuild, give the model's rows`, () => {
    const paths = pathsOf(engine);
    for (const kind of KINDS) {
      it(
        `${kind.name}: ${Object.keys(paths).join(', ')}; then rebuild`,
        async () => {
          await fc.assert(
            fc.asyncProperty(wideScenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              const asOf: Array<Array<Record<string, unknown>>> = [];
              const counts = sc.batches.map((b) => {
                const c = model.apply(b.map((r) => canonOn(engine.name, sc, r)));
                asOf.push(model.target().map((r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>));
                return c;
              });
              // The model's rows through JSON: what an NDJSON line of them reads back as.
              const rows = model.target().map((r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>);
              // The target's columns: the first applied record's, as written (where previous values go is not compared).
              const previous = Object.values(sc.spec.previousValues ?? {});
              const shown = (cols: string[]) => cols.filter((c) => !previous.includes(c));
              const want = { counts, rows, columns: rows[0] ? Object.keys(rows[0]) : [], asOf };
              const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-paths-'));
              try {
                const problems: string[] = [];
                for (const [name, run] of Object.entries(paths)) {
                  try {
                    problems.push(...problemsOf(name, await run(sc, dir), want, shown));
                  } catch (e) {
                    problems.push(`${name}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
                  }
                }
                expect(problems, describeWide(sc)).toEqual([]);
              } finally {
                rmSync(dir, { recursive: true, force: true });
              }
            }),
            fcParams<[WideScenario]>(RUNS, engine.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
