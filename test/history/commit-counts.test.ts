/**
 * A commit's counts mean what docs/SEMANTICS.md §5 says they count, on every engine: keys changed
 * (not keys that had events), versions added, closed, changed and removed (by key and start, not
 * physical writes), and the keys that tied, listed. Every expectation is written by hand from the
 * events below; then the same through `bin/scd` (the summary line and `--json`).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { type ApplyResult, applyRows, type Driver, defineFlow, type FlowInput, readTargetWith, rebuild } from '../../src/index.js';
import { engines, freshSchema } from '../engines.js';
import { assertBuilt, parseNdjson, type Row, scdOk, tempDir } from './fixtures/history.js';

const FLOW: FlowInput = { target: 'dim_counts', keys: 'id', sequenceBy: 'seq', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] };
const up = (id: number, seq: number, v: string) => ({ id, seq, v, op: 'U' });
const del = (id: number, seq: number) => ({ id, seq, v: null, op: 'D' });

/** One commit each. */
const BATCHES = [
  // A first load holding closed versions: id 1 three versions, id 3 one ended by a delete, id 5 two.
  [up(1, 10, 'a'), up(1, 20, 'b'), up(1, 30, 'c'), up(2, 10, 'x'), up(3, 10, 'p'), del(3, 20), up(5, 10, 'a'), up(5, 50, 'b')],
  // A delete that ends a live version (id 2), one of a key never seen (9), one of a key already deleted (3).
  [del(2, 40), del(9, 40), del(3, 40)],
  // Late events: id 1's [20,30) is cut at 25; id 5's b arrives earlier, at 30, so [50,–) goes and [30,–) comes.
  [up(1, 25, 'bb'), up(5, 30, 'b')],
  // Ties: two new events of id 4 at 10, and a new event of id 1 at 30 where the log holds one.
  [up(4, 10, 'm'), up(4, 10, 'n'), up(1, 30, 'c2')],
];

/** The counts of each commit, from SEMANTICS §3 and §5 by hand. */
const EXPECTED: Array<Partial<ApplyResult>> = [
  // Versions: 1 [10,20) [20,30) [30,–) · 2 [10,–) · 3 [10,20) · 5 [10,50) [50,–): seven, four of them ended.
  { rowsRead: 8, eventsApplied: 8, ties: 0, keysChanged: 4, versionsAdded: 7, versionsClosed: 4, versionsChanged: 0, versionsRemoved: 0 },
  // Only id 2 changes: its live version ends at 40 (the same version, now closed). 9 and 3 change nothing.
  { rowsRead: 3, eventsApplied: 3, ties: 0, keysChanged: 1, versionsAdded: 0, versionsClosed: 1, versionsChanged: 1, versionsRemoved: 0 },
  // id 1: [20,30) becomes [20,25) (changed), [25,30) added already ended (closed).
  // id 5: [10,50) becomes [10,30) (changed), [50,–) removed, [30,–) added and live.
  { rowsRead: 2, eventsApplied: 2, ties: 0, keysChanged: 2, versionsAdded: 2, versionsClosed: 1, versionsChanged: 2, versionsRemoved: 1 },
  // Ties counted as events: id 4's two new ones, id 1's one new one. id 4 gets [10,–) n (the [10,10)
  // of m is left out); id 1's [30,–) takes c2 in place (c2 sorts after c).
  { rowsRead: 3, eventsApplied: 3, ties: 3, tiedKeys: [{ id: '1' }, { id: '4' }], keysChanged: 2, versionsAdded: 1, versionsClosed: 0, versionsChanged: 1, versionsRemoved: 0 },
];

const ZERO = { keysChanged: 0, versionsAdded: 0, versionsClosed: 0, versionsChanged: 0, versionsRemoved: 0 };

/** The target after the last batch, by hand. */
const TARGET: Row[] = [
  { id: 1, v: 'a', seq: 10, __START_AT: 10, __END_AT: 20 },
  { id: 1, v: 'b', seq: 20, __START_AT: 20, __END_AT: 25 },
  { id: 1, v: 'bb', seq: 25, __START_AT: 25, __END_AT: 30 },
  { id: 1, v: 'c2', seq: 30, __START_AT: 30, __END_AT: null },
  { id: 2, v: 'x', seq: 10, __START_AT: 10, __END_AT: 40 },
  { id: 3, v: 'p', seq: 10, __START_AT: 10, __END_AT: 20 },
  { id: 4, v: 'n', seq: 10, __START_AT: 10, __END_AT: null },
  { id: 5, v: 'a', seq: 10, __START_AT: 10, __END_AT: 30 },
  { id: 5, v: 'b', seq: 50, __START_AT: 30, __END_AT: null }, // seq is untracked: the version's last event's
];

const pick = (r: ApplyResult, want: Partial<ApplyResult>) => Object.fromEntries(Object.keys(want).map((k) => [k, r[k as keyof ApplyResult]]));

for (const engine of engines) {
  describe(`${engine.name}: what a commit's counts count`, { timeout: 240_000 }, () => {
    it('first load with closed versions, deletes applied and of absent keys, late events, ties listed, a replay and an unchanged rebuild', async () => {
      const driver: Driver = await engine.open();
      try {
        const flow = defineFlow(FLOW);
        for (const [i, batch] of BATCHES.entries()) {
          const r = await applyRows(driver, flow, batch);
          expect({ commit: i + 1, ...pick(r, EXPECTED[i]!) }).toEqual({ commit: i + 1, ...EXPECTED[i] });
          if (!EXPECTED[i]!.tiedKeys) expect(r.tiedKeys).toBeUndefined();
        }
        expect(await readTargetWith(driver, flow)).toEqual(TARGET);
        // A replay changes nothing, and ties nothing new.
        const replay = await applyRows(driver, flow, BATCHES[3]!);
        expect({ ...pick(replay, ZERO), duplicates: replay.duplicates, ties: replay.ties, tiedKeys: replay.tiedKeys }).toEqual({
          ...ZERO,
          duplicates: 3,
          ties: 0,
          tiedKeys: undefined,
        });
        // A rebuild of an unchanged flow changes no key.
        const rebuilt = await rebuild(driver, flow);
        expect(pick(rebuilt, ZERO)).toEqual(ZERO);
        expect(await readTargetWith(driver, flow)).toEqual(TARGET);
      } finally {
        await driver.close();
      }
    });
  });
}

describe('the counts through bin/scd', { timeout: 240_000 }, () => {
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(() => {
    assertBuilt();
    tmp = tempDir('scdkit-counts-');
  });
  afterAll(() => tmp?.cleanup());

  const databases = [['duckdb', 'counts.duckdb'], ...(process.env.SCD_TEST_POSTGRES_URL ? [['postgres', process.env.SCD_TEST_POSTGRES_URL]] : [])] as const;
  for (const [engine, database] of databases) {
    it(`${engine}: the summary line says keys changed and versions added, closed, changed, removed; --json lists the tied keys`, async () => {
      const dir = path.join(tmp.dir, engine);
      mkdirSync(dir, { recursive: true });
      // On the server, a schema of its own, dropped when its owner closes (after the scd processes).
      const schema = engine === 'postgres' ? freshSchema() : undefined;
      const owner = schema ? await PostgresDriver.connect(database, { schema, dropSchemaOnClose: true }) : undefined;
      writeFileSync(path.join(dir, 'flow.json'), JSON.stringify({ ...FLOW, database, ...(schema ? { schema } : {}) }));
      try {
        const files = BATCHES.map((b, i) => {
          const file = path.join(dir, `0${i + 1}.ndjson`);
          writeFileSync(file, b.map((r) => JSON.stringify(r)).join('\n') + '\n');
          return file;
        });
        const first = await scdOk(['apply', 'flow.json', '--input', files[0]!], dir);
        expect(first.stdout).toMatch(
          /^commit 1: read 8 rows = 8 applied \+ 0 duplicates \+ 0 quarantined; 4 keys changed: 7 versions added, 4 closed, 0 changed, 0 removed \(\d+ ms\)\n$/,
        );
        const second = await scdOk(['apply', 'flow.json', '--input', files[1]!], dir);
        expect(second.stdout).toMatch(/^commit 2: read 3 rows = 3 applied \+ 0 duplicates \+ 0 quarantined; 1 key changed: 0 versions added, 1 closed, 1 changed, 0 removed /);
        await scdOk(['apply', 'flow.json', '--input', files[2]!], dir);
        const tied = await scdOk(['apply', 'flow.json', '--input', files[3]!], dir);
        expect(tied.stdout).toMatch(
          /^commit 4: read 3 rows = 3 applied \+ 0 duplicates \+ 0 quarantined; 3 ties \(id=1, id=4\); 2 keys changed: 1 version added, 0 closed, 1 changed, 0 removed /,
        );
        const json = parseNdjson((await scdOk(['apply', 'flow.json', '--input', files[3]!, '--json'], dir)).stdout);
        expect(json[0]).toMatchObject({ version: 5, ties: 0, duplicates: 3, ...ZERO });
        expect(json[0]).not.toHaveProperty('tiedKeys');
        const rebuilt = parseNdjson((await scdOk(['rebuild', 'flow.json', '--json'], dir)).stdout);
        expect(rebuilt[0]).toMatchObject({ version: 6, operation: 'rebuild', ...ZERO });
        // The log keeps the counts: commit 4's, as `apply --json` gave them.
        const log = parseNdjson((await scdOk(['log', 'flow.json', '--json'], dir)).stdout);
        expect(log.find((c) => c.version === 4)).toMatchObject({ ties: 3, keysChanged: 2, versionsAdded: 1, versionsClosed: 0, versionsChanged: 1, versionsRemoved: 0 });
      } finally {
        await owner?.close();
      }
    });
  }
  it('duckdb: `apply --json` of a commit with ties lists the tied keys as `scd show --key` takes them', async () => {
    const dir = path.join(tmp.dir, 'json');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'flow.json'), JSON.stringify({ ...FLOW, database: 'json.duckdb' }));
    writeFileSync(path.join(dir, 'ties.ndjson'), BATCHES[3]!.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const [r] = parseNdjson((await scdOk(['apply', 'flow.json', '--input', 'ties.ndjson', '--json'], dir)).stdout);
    expect(r).toMatchObject({ ties: 2, tiedKeys: [{ id: '4' }], keysChanged: 2, versionsAdded: 2, versionsClosed: 0 });
    const shown = parseNdjson((await scdOk(['show', 'flow.json', '--key', 'id=4', '--format', 'ndjson'], dir)).stdout);
    expect(shown.map((s) => s.v)).toEqual(['n']);
  });
});
