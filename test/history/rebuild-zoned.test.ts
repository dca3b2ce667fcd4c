/**
 * `scd rebuild` of a target sequenced by timestamps with a zone, through `bin/scd` on every
 * engine. DuckDB's catalog spells the type `TIMESTAMP WITH TIME ZONE` where the plan writes
 * `TIMESTAMPTZ`: two spellings of one type, once compared as text, refused every such rebuild
 * ("column "ts" would change type"). The sequences mix offset styles (Z, ±hh:mm, ±hhmm, ±hh),
 * naive times (read in the flow's zone) and dates; other columns hold naive timestamps, dates,
 * exact decimals, unicode and nulls. The rebuilt target must equal what applying the same
 * inputs from scratch with the flow as it now is gives.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from './fixtures/cli-databases.js';
import { parseNdjson, type Row, scd, scdOk } from './fixtures/history.js';

const tmp = cliTestDir();

/** Two commits of change records, as written (zoned sequences in every offset style). */
const BATCHES = [
  [
    '{"id":1,"ts":"2025-01-01T00:00:00Z","name":"Zoë","city":"Paris","seen":"2025-01-01T08:00:00","born":"1990-02-03","amount":12.50}',
    '{"id":1,"ts":"2025-01-02T05:30:00+05:30","name":"Zoë","city":"Lyon","seen":"2025-01-02T08:00:00.5","born":"1990-02-03","amount":13.25}',
    '{"id":2,"ts":"2025-01-01T00:00:00.123456+0100","name":"","city":"東京","seen":null,"born":null,"amount":null}',
    '{"id":3,"ts":"2025-01-01 10:00:00","name":"Ann","city":"Oslo","seen":"2025-01-01T00:00:00","born":"2000-01-01","amount":0.01}',
  ],
  [
    '{"id":1,"ts":"2025-01-03T00:00:00-08","name":"Zoë K","city":"Lyon","seen":"2025-01-03T08:00:00","born":"1990-02-03","amount":14.00}',
    '{"id":2,"ts":"2025-01-05","name":"Bo","city":"東京","seen":"2025-01-05T00:00:00.000001","born":"1985-12-31","amount":-3.75}',
    '{"id":3,"ts":"2025-01-04T23:59:59.999999+14:00","name":"Ann","city":"Bergen","seen":"2025-01-04T00:00:00","born":"2000-01-01","amount":0.02}',
  ],
];

const BASE = { target: 'people', keys: 'id', sequenceBy: 'ts', columnTypes: { amount: 'decimal(10,2)' } };
/** The same flow with what only a rebuild may change: tracked columns, output columns, previous values. */
const CHANGED = {
  ...BASE,
  trackHistory: ['city'],
  exceptColumns: ['seen'],
  previousValues: { city: 'previous_city' },
  isCurrentColumn: 'is_current',
};

function project(name: string, flow: object, settings: { database: string; schema?: string }) {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  const files = BATCHES.map((lines, i) => {
    const file = path.join(dir, `batch-${i + 1}.ndjson`);
    writeFileSync(file, lines.join('\n') + '\n');
    return file;
  });
  const flowFile = path.join(dir, 'flow.json');
  const write = (f: object) => writeFileSync(flowFile, JSON.stringify({ ...f, ...settings }, null, 2));
  write(flow);
  return { dir, files, flowFile, write };
}

async function applyAll(p: ReturnType<typeof project>) {
  for (const file of p.files) await scdOk(['apply', p.flowFile, '--input', file], p.dir);
}

async function exported(p: ReturnType<typeof project>): Promise<Row[]> {
  return parseNdjson((await scdOk(['export', p.flowFile, '--format', 'ndjson'], p.dir)).stdout);
}

describe('scd rebuild of a target sequenced by zoned timestamps', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: an unchanged flow rebuilds to the same rows`, async ({ expect }) => {
      const p = project(`same-${db.name}`, BASE, db.settings(path.join(tmp.dir, `same-${db.name}`)));
      await applyAll(p);
      const before = await exported(p);
      expect(before.find((r) => r.id === 2 && r.__END_AT === null)).toMatchObject({ ts: '2025-01-05T00:00:00Z', city: '東京', name: 'Bo' });
      const r = await scd(['rebuild', p.flowFile, '--json'], p.dir);
      expect(r.stderr).not.toMatch(/would change type/);
      expect(r.code, r.stderr).toBe(0);
      expect(parseNdjson(r.stdout)[0]).toMatchObject({ operation: 'rebuild', keysChanged: 0, versionsAdded: 0, versionsRemoved: 0 });
      expect(await exported(p)).toEqual(before);
    });

    it(`${db.name}: trackHistory, columns and previousValues changed: the rebuild equals applying from scratch`, async ({ expect }) => {
      const p = project(`changed-${db.name}`, BASE, db.settings(path.join(tmp.dir, `changed-${db.name}`)));
      await applyAll(p);
      p.write(CHANGED);
      const r = await scd(['rebuild', p.flowFile], p.dir);
      expect(r.stderr).not.toMatch(/would change type/);
      expect(r.code, r.stderr).toBe(0);

      const fresh = project(`fresh-${db.name}`, CHANGED, db.settings(path.join(tmp.dir, `fresh-${db.name}`)));
      await applyAll(fresh);
      const expected = await exported(fresh);
      expect(await exported(p)).toEqual(expected);
      // What the new flow says, as read: Zoë's name change no longer opens a version; her move does.
      const zoe = expected.filter((x) => x.id === 1);
      expect(zoe.map((x) => [x.city, x.previous_city, x.name, x.__START_AT, x.is_current])).toEqual([
        ['Paris', null, 'Zoë', '2025-01-01T00:00:00Z', false],
        ['Lyon', 'Paris', 'Zoë K', '2025-01-02T00:00:00Z', true],
      ]);
      expect(Object.keys(zoe[0]!)).not.toContain('seen');
      expect(expected.find((x) => x.id === 3 && x.is_current)).toMatchObject({ ts: '2025-01-04T09:59:59.999999Z', amount: 0.02, previous_city: 'Oslo' });
    });
  }
});
