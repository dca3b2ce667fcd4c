/**
 * A current flag with the flow's own two values (`isCurrentValues: [Y, N]`, docs/FLOWS.md), through
 * `bin/scd` on DuckDB and PostgreSQL (PGlite, and the server when SCD_TEST_POSTGRES_URL is set):
 * the employees article's table, `is_active` 'Y' on the current version and 'N' on the one a raise
 * closed, its change feed, and a rebuild that changes nothing. A flag of two equal values, or values
 * without a flag column, is refused in one line.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { freshSchema } from '../engines.js';
import { assertBuilt, parseNdjson, type Row, scd, scdOk, tempDir } from '../history/fixtures/history.js';
import { FLOW_PLACES, writeFlowProject } from './fixtures/flow-projects.js';

let tmp: { dir: string; cleanup: () => void };
beforeAll(() => {
  assertBuilt();
  tmp = tempDir('scdkit-current-values-');
});
afterAll(() => tmp?.cleanup());

const EMPLOYEES = {
  target: 'employees',
  keys: 'id',
  sequenceBy: 'seq',
  exceptColumns: ['seq'],
  isCurrentColumn: 'is_active',
  isCurrentValues: ['Y', 'N'],
};
const INITIAL = [
  { id: 1, name: 'John', age: 32, salary: 30000, seq: 1 },
  { id: 2, name: 'Jack', age: 32, salary: 30000, seq: 1 },
];
/** Jack's raise: his version closes ('N') and a new one opens ('Y'). */
const RAISE = [{ id: 2, name: 'Jack', age: 36, salary: 70000, seq: 2 }];

const url = process.env.SCD_TEST_POSTGRES_URL;
const PLACES = FLOW_PLACES;

const project = (name: string, flow: Record<string, unknown>, files: Record<string, Row[]>) => writeFlowProject(tmp.dir, name, flow, files);

describe("a current flag with the flow's values, through bin/scd", { timeout: 240_000 }, () => {
  for (const place of PLACES) {
    it(`${place.engine}: 'Y' on current versions, 'N' on closed ones, in the target, the change feed and after a rebuild`, async () => {
      const schema = place.server ? freshSchema() : undefined;
      const owner = schema ? await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true }) : undefined;
      try {
        const name = `employees-${place.engine}`;
        const dir = project(
          name,
          { ...EMPLOYEES, database: place.database(path.join(tmp.dir, name)), ...(schema ? { schema } : {}) },
          { '01.ndjson': INITIAL, '02.ndjson': RAISE },
        );
        await scdOk(['apply', 'flow.json', '--input', '01.ndjson'], dir);
        await scdOk(['apply', 'flow.json', '--input', '02.ndjson'], dir);
        const rows = parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout);
        // The article's expected results: id, name, age, salary, is_active.
        expect(rows).toEqual([
          { id: 1, name: 'John', age: 32, salary: 30000, __START_AT: 1, __END_AT: null, is_active: 'Y' },
          { id: 2, name: 'Jack', age: 32, salary: 30000, __START_AT: 1, __END_AT: 2, is_active: 'N' },
          { id: 2, name: 'Jack', age: 36, salary: 70000, __START_AT: 2, __END_AT: null, is_active: 'Y' },
        ]);
        // The close in the change feed: its pre-image current ('Y'), its post-image not ('N').
        const feed = parseNdjson((await scdOk(['changes', 'flow.json', '--from-version', '2', '--format', 'ndjson'], dir)).stdout);
        expect(feed.map((r) => [r._change_type, r.salary, r.__END_AT, r.is_active])).toEqual([
          ['update_preimage', 30000, null, 'Y'],
          ['update_postimage', 30000, 2, 'N'],
          ['insert', 70000, null, 'Y'],
        ]);
        const current = parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson', '--where', "is_active = 'Y'"], dir)).stdout);
        expect(current.map((r) => [r.id, r.salary])).toEqual([
          [1, 30000],
          [2, 70000],
        ]);
        const rebuilt = JSON.parse((await scdOk(['rebuild', 'flow.json', '--json'], dir)).stdout);
        expect(rebuilt).toMatchObject({ keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0, versionsClosed: 0 });
        expect(parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout)).toEqual(rows);
      } finally {
        await owner?.close();
      }
    });
  }

  it('two equal values, or values without isCurrentColumn, are refused before anything is applied', async () => {
    for (const [name, flow, says] of [
      ['same', { ...EMPLOYEES, isCurrentValues: ['Y', 'Y'] }, /both "Y"/],
      ['no-column', { ...EMPLOYEES, isCurrentColumn: undefined }, /isCurrentColumn/],
    ] as const) {
      const dir = project(`refused-${name}`, { ...flow, database: 'x.duckdb' }, { '01.ndjson': INITIAL });
      const r = await scd(['apply', 'flow.json', '--input', '01.ndjson'], dir);
      expect(r.code, name).not.toBe(0);
      expect(r.stderr, name).toMatch(says);
      expect(r.stderr, name).not.toMatch(/bug in scdkit/);
    }
  });
});
