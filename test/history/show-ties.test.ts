/**
 * `scd show --key` says which versions ties decided (docs/QUERYING.md "One key's versions"): each
 * version's `_ties` counts the key's events that share their sequence with another, different
 * event and fall in its span (from its start to the next version's start; the last version's has
 * no end). Through `bin/scd` on DuckDB and PostgreSQL (PGlite, and the server when
 * SCD_TEST_POSTGRES_URL is set), with the values change data holds: zoned timestamps in mixed
 * offsets as the sequence (two spellings of one instant tie), a key beyond 2^53, unicode. The
 * apply names the tied key; the table and NDJSON of `show` carry `_ties`; a tuple sequence's ties
 * are found part by part.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from './fixtures/cli-databases.js';
import { parseNdjson, scdOk } from './fixtures/history.js';

const tmp = cliTestDir();

const FLOW = { target: 'dim_person', keys: 'id', sequenceBy: 'ts', applyAsDeletes: "op = 'D'", exceptColumns: ['op'] };
const BIG = '9007199254740993';
/** One key's events; the tied pairs are two spellings of one instant. */
const RECORDS = [
  `{"id":${BIG},"ts":"2025-01-01T00:00:00Z","name":"Zoë","op":"U"}`,
  // A tie: 05:30 at +05:30 is midnight UTC. Ordered by payload, "c ✓" after "b ✓": c's values hold.
  `{"id":${BIG},"ts":"2025-01-02T05:30:00+05:30","name":"b ✓","op":"U"}`,
  `{"id":${BIG},"ts":"2025-01-02T00:00:00Z","name":"c ✓","op":"U"}`,
  `{"id":${BIG},"ts":"2025-01-02T12:00:00.000001Z","name":"東京","op":"U"}`,
  // A tie of an upsert and a delete: the delete, ordered after, ends 東京's version there.
  `{"id":${BIG},"ts":"2025-01-03T00:00:00-08:00","name":"","op":"U"}`,
  `{"id":${BIG},"ts":"2025-01-03T08:00:00Z","name":null,"op":"D"}`,
  // Another key, no tie.
  `{"id":2,"ts":"2025-01-02T00:00:00+01:00","name":"Ann","op":"U"}`,
];

/** A tuple sequence: (ts, lsn) equal in both parts tie; equal in the first part only do not. */
const TUPLE_FLOW = { target: 'dim_tuple', keys: 'id', sequenceBy: ['ts', 'lsn'] };
const TUPLE_RECORDS = [
  '{"id":1,"ts":"2025-01-01T00:00:00Z","lsn":1,"v":"a"}',
  '{"id":1,"ts":"2025-01-01T00:00:00Z","lsn":2,"v":"c"}',
  '{"id":1,"ts":"2025-01-01T01:00:00+01:00","lsn":2,"v":"b"}',
  '{"id":1,"ts":"2025-01-01T00:00:00Z","lsn":3,"v":"d"}',
];

function project(name: string, flow: object, settings: object, records: string[]): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'flow.json'), JSON.stringify({ ...flow, ...settings }));
  writeFileSync(path.join(dir, 'changes.ndjson'), records.join('\n') + '\n');
  return dir;
}

describe('scd show marks the versions ties decided', { timeout: 300_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: the apply names the tied key; show --key gives each version's ties, in NDJSON and the table`, async ({ expect }) => {
      const dir = project(`ties-${db.name}`, FLOW, db.settings(path.join(tmp.dir, `ties-${db.name}`)), RECORDS);
      const applied = JSON.parse((await scdOk(['apply', 'flow.json', '--input', 'changes.ndjson', '--json'], dir)).stdout);
      expect(applied).toMatchObject({ ties: 4, tiedKeys: [{ id: BIG }] });

      const shown = parseNdjson((await scdOk(['show', 'flow.json', '--key', `id=${BIG}`, '--format', 'ndjson'], dir)).stdout);
      expect(shown.map((r) => [r.name, r._ties])).toEqual([
        ['Zoë', 0],
        ['c ✓', 2],
        ['東京', 2],
      ]);
      // The key beyond 2^53 as stored, exactly.
      const raw = (await scdOk(['show', 'flow.json', '--key', `id=${BIG}`, '--format', 'ndjson'], dir)).stdout;
      expect(raw.split('\n')[0]).toMatch(new RegExp(`^\\{"id":${BIG},`));

      const other = parseNdjson((await scdOk(['show', 'flow.json', '--key', 'id=2', '--format', 'ndjson'], dir)).stdout);
      expect(other.map((r) => [r.name, r._ties])).toEqual([['Ann', 0]]);

      const table = (await scdOk(['show', 'flow.json', '--key', `id=${BIG}`, '--format', 'table'], dir)).stdout.split('\n');
      expect(table[0]).toMatch(/\b_changed\s+_ties$/);
      expect(table.slice(2, 5).map((line) => line.trim().split(/\s+/).at(-1))).toEqual(['0', '2', '2']);
    });

    it(`${db.name}: a tuple sequence ties only when every part is equal`, async ({ expect }) => {
      const dir = project(`tuple-${db.name}`, TUPLE_FLOW, db.settings(path.join(tmp.dir, `tuple-${db.name}`)), TUPLE_RECORDS);
      const applied = JSON.parse((await scdOk(['apply', 'flow.json', '--input', 'changes.ndjson', '--json'], dir)).stdout);
      expect(applied).toMatchObject({ ties: 2, tiedKeys: [{ id: '1' }] });
      const shown = parseNdjson((await scdOk(['show', 'flow.json', '--key', 'id=1', '--format', 'ndjson'], dir)).stdout);
      expect(shown.map((r) => [r.v, r._ties])).toEqual([
        ['a', 0],
        ['c', 2],
        ['d', 0],
      ]);
    });
  }
});
