/**
 * An inclusive end (`endInclusive: true`, docs/FLOWS.md): the end column holds the next version's
 * start less one day, as in `end_date = next start - 1`, through `bin/scd` on DuckDB and PostgreSQL
 * (PGlite, and the server when SCD_TEST_POSTGRES_URL is set). The interview article's customer,
 * Priya, moves from Pune to Bengaluru on 1 October, with `effective_to` 9999-12-31 on the current
 * row; a late change on 15 September cuts her Pune version in two. `as-of` on a version's last day
 * finds it; previous values still link the versions; a rebuild changes nothing. A sequence with no
 * day or unit to step back by is refused in one line.
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
  tmp = tempDir('scdkit-inclusive-end-');
});
afterAll(() => tmp?.cleanup());

const FLOW = {
  target: 'dim_customer',
  keys: 'customer_id',
  sequenceBy: 'effective_from',
  exceptColumns: ['effective_from'],
  startAtColumn: 'effective_from',
  endAtColumn: 'effective_to',
  endSentinel: '9999-12-31',
  endInclusive: true,
  isCurrentColumn: 'is_current',
  previousValues: { city: 'previous_city' },
};
const rec = (city: string, effective_from: string) => ({ customer_id: 'C101', name: 'Priya', city, effective_from });
const FILES = {
  '01.ndjson': [rec('Pune', '2026-09-01')],
  '02.ndjson': [rec('Bengaluru', '2026-10-01')],
  // Late: a change on 15 September, applied after October's.
  '03.ndjson': [rec('Pune East', '2026-09-15')],
};

const url = process.env.SCD_TEST_POSTGRES_URL;
const PLACES = FLOW_PLACES;

const project = (name: string, flow: Record<string, unknown>, files: Record<string, Row[]>) => writeFlowProject(tmp.dir, name, flow, files);

const row = (city: string, previous_city: string | null, effective_from: string, effective_to: string, is_current: boolean) => ({
  customer_id: 'C101',
  name: 'Priya',
  city,
  previous_city,
  effective_from,
  effective_to,
  is_current,
});

describe('an inclusive end, through bin/scd', { timeout: 240_000 }, () => {
  for (const place of PLACES) {
    it(`${place.engine}: effective_to is the next start less a day; as-of finds a version on its last day; a late change cuts it; a rebuild changes nothing`, async () => {
      const schema = place.server ? freshSchema() : undefined;
      const owner = schema ? await PostgresDriver.connect(url!, { schema, dropSchemaOnClose: true }) : undefined;
      try {
        const name = `customer-${place.engine}`;
        const dir = project(name, { ...FLOW, database: place.database(path.join(tmp.dir, name)), ...(schema ? { schema } : {}) }, FILES);
        const exportRows = async () => parseNdjson((await scdOk(['export', 'flow.json', '--format', 'ndjson'], dir)).stdout);
        const asOf = async (t: string) => parseNdjson((await scdOk(['as-of', 'flow.json', t, '--format', 'ndjson'], dir)).stdout).map((r) => r.city);

        await scdOk(['apply', 'flow.json', '--input', '01.ndjson'], dir);
        await scdOk(['apply', 'flow.json', '--input', '02.ndjson'], dir);
        expect(await exportRows()).toEqual([row('Pune', null, '2026-09-01', '2026-09-30', false), row('Bengaluru', 'Pune', '2026-10-01', '9999-12-31', true)]);
        expect(await asOf('2026-09-30')).toEqual(['Pune']);
        expect(await asOf('2026-10-01')).toEqual(['Bengaluru']);

        const late = JSON.parse((await scdOk(['apply', 'flow.json', '--input', '03.ndjson', '--json'], dir)).stdout);
        expect(late).toMatchObject({ keysChanged: 1, versionsAdded: 1, versionsChanged: 2, versionsClosed: 1 });
        const after = await exportRows();
        expect(after).toEqual([
          row('Pune', null, '2026-09-01', '2026-09-14', false),
          row('Pune East', 'Pune', '2026-09-15', '2026-09-30', false),
          row('Bengaluru', 'Pune East', '2026-10-01', '9999-12-31', true),
        ]);
        expect(await asOf('2026-09-14')).toEqual(['Pune']);
        expect(await asOf('2026-09-15')).toEqual(['Pune East']);

        const rebuilt = JSON.parse((await scdOk(['rebuild', 'flow.json', '--json'], dir)).stdout);
        expect(rebuilt).toMatchObject({ keysChanged: 0, versionsAdded: 0, versionsChanged: 0, versionsRemoved: 0, versionsClosed: 0 });
        expect(await exportRows()).toEqual(after);
      } finally {
        await owner?.close();
      }
    });
  }

  it('a timestamp sequence has no day to step back by: refused in one line, nothing applied', async () => {
    const dir = project('timestamps', { ...FLOW, endSentinel: undefined, database: 'x.duckdb' }, { '01.ndjson': [rec('Pune', '2026-09-01T10:00:00Z')] });
    const r = await scd(['apply', 'flow.json', '--input', '01.ndjson'], dir);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/endInclusive/);
    expect(r.stderr).not.toMatch(/bug in scdkit/);
    const log = await scd(['log', 'flow.json', '--format', 'ndjson'], dir);
    expect(log.stdout).not.toMatch(/"version"/);
  });
});
