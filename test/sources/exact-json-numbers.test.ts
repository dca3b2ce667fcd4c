/**
 * JSON numbers through `bin/scd`, as written (TYPES.md; decision 0171): a declared decimal keeps
 * 9007199254740993.0 from a JSON number (DuckDB's reader rounded it), ±1e308 are doubles beside
 * fractions (PostgreSQL's jsonb made them 309-digit integers and the apply stopped), 2e3 is a
 * fraction, and 1e999 is quarantined with a reason naming it as written (PostgreSQL quoted 80 of
 * its 1,000 digits), and 1e-400 does not fit a decimal (DuckDB's reader had made it 0.0, stored as
 * 0.0). Every output shows the stored values.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, scdOk } from '../history/fixtures/history.js';
import { mkdir } from './fixtures/util.js';

const tmp = cliTestDir();

const FLOW = { target: 'm', keys: 'id', sequenceBy: 'seq', columnTypes: { a: 'decimal(20,1)' } };
const LINES = [
  '{"id":1,"seq":1,"a":9007199254740993.0,"x":1e308,"y":0.5}',
  '{"id":2,"seq":1,"a":-0.5,"x":-1e308,"y":2e3}',
  '{"id":3,"seq":1,"a":1.5,"x":1e999,"y":1.5}',
  '{"id":4,"seq":1,"a":1e-400,"x":1,"y":1}',
];

describe('JSON numbers as written, through bin/scd', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: a long decimal, ±1e308 beside fractions, 2e3, 1e999 quarantined by name, 1e-400 does not fit`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `exact-${db.name}`);
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ ...FLOW, ...db.settings(dir) }, null, 2));
      const file = path.join(dir, 'changes.ndjson');
      writeFileSync(file, LINES.join('\n') + '\n');
      const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--input', file, '--json'], dir)).stdout);
      expect([applied!.eventsApplied, applied!.quarantined]).toEqual([2, 2]);
      const ndjson = (await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout;
      expect(ndjson).toContain('"a":9007199254740993.0');
      expect(ndjson).toMatch(/"x":1e\+?308/);
      expect(ndjson).toMatch(/"x":-1e\+?308/);
      const csv = (await scdOk(['export', flowFile, '--format', 'csv'], dir)).stdout;
      expect(csv).toContain('9007199254740993.0');
      const quarantine = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout);
      expect(quarantine.map((q) => q.reason)).toEqual([expect.stringMatching(/^value 1e999 does not fit column "x"/), expect.stringMatching(/does not fit column "a"/)]);
      expect(quarantine.map((q) => q.raw)).toEqual([LINES[2], LINES[3]]);
    });
  }
});
