/**
 * Every output format names every stored value exactly, through `bin/scd` on every engine
 * (docs/QUERYING.md "Values as read"). Table and CSV once went through JavaScript numbers: a
 * decimal(20,1) holding 9007199254740993.0 printed as 9007199254740992, a bigint beyond 2^53
 * likewise. Here the target holds edge values — decimals with scale, bigints at 2^53 + 1 and at
 * the 64-bit limits, doubles at the edges and -0.0, unicode and empty strings, nulls, zoned
 * timestamps with microseconds, dates — and each format (table, CSV, NDJSON, Parquet, the web
 * pages) is read back and compared with what the engine itself holds (its own text of each value).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { members, scanDocument, textOf } from '../../src/files/json-text.js';
import { driverPerRequest, loadFlowFile, openDriver, startServer, withDatabase } from '../../src/index.js';
import { cliDatabases, cliTestDir } from './fixtures/cli-databases.js';
import { scdOk } from './fixtures/history.js';

const tmp = cliTestDir();

const FLOW = {
  target: 'edge',
  keys: 'id',
  sequenceBy: 'ts',
  columnTypes: { dec: 'decimal(20,1)', wide: 'decimal(38,10)', big: 'bigint', dbl: 'double', d: 'date' },
};
/**
 * Exact decimals are given as JSON strings: their text reaches the decimal as written (DuckDB's JSON
 * reader keeps 17 digits of a fraction). So is -0.0: PostgreSQL holds a JSON number as numeric,
 * which has no negative zero (docs/TYPES.md).
 */
const RECORDS = [
  '{"id":9007199254740993,"ts":"2025-01-01T00:00:00.000001+05:30","dec":"9007199254740993.0","wide":"1234567890123456789012345678.0123456789","big":9223372036854775807,"dbl":"-0.0","s":"héllo ✓ 東京 🎉","d":"2025-12-31"}',
  '{"id":9007199254740993,"ts":"2025-01-02T23:59:59.999999-0800","dec":"-0.1","wide":"-0.0000000001","big":-9223372036854775808,"dbl":1e308,"s":"","d":"1970-01-01"}',
  '{"id":2,"ts":"2025-01-01T00:00:00Z","dec":null,"wide":null,"big":9007199254740993,"dbl":-1e308,"s":null,"d":null}',
  '{"id":3,"ts":"2025-01-01T12:00:00.5+14:00","dec":"0.0","wide":"0.1","big":0,"dbl":5e-324,"s":"a,b \\"q\\"\\nline","d":"2000-02-29"}',
  '{"id":4,"ts":"2025-01-01T00:00:00-0930","dec":"99999999999999999.9","wide":"9999999999999999999999999999.9999999999","big":-1,"dbl":0.1,"s":"\\t","d":"1999-01-01"}',
  '{"id":5,"ts":"2025-01-01T00:00:00Z","dec":"1","wide":"2","big":3,"dbl":1.7976931348623157e308,"s":"x","d":"2024-02-29"}',
];
const COLUMNS = ['id', 'ts', 'dec', 'wide', 'big', 'dbl', 's', 'd', '__START_AT', '__END_AT'] as const;
const NUMBERS = new Set(['id', 'dec', 'wide', 'big', 'dbl']);
const TIMES = new Set(['ts', '__START_AT', '__END_AT']);

/** A number's text in one spelling: sign, significant digits, the power of ten of the first (zero keeps its sign). */
function canonicalNumber(text: string): string {
  const t = text.trim();
  if (/^[+]?(inf|infinity)$/i.test(t)) return 'Infinity';
  if (/^-(inf|infinity)$/i.test(t)) return '-Infinity';
  if (/^[+-]?nan$/i.test(t)) return 'NaN';
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t);
  if (!m) return `not a number: ${t}`;
  const all = (m[2] ?? '') + (m[3] ?? '');
  const lead = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lead).replace(/0+$/, '');
  if (!digits) return `${m[1] === '-' ? '-' : ''}0`;
  return `${m[1] === '-' ? '-' : ''}${digits}e${(m[2] ?? '').length - lead - 1 + Number(m[4] ?? 0)}`;
}

/** A timestamp's text as UTC with six fraction digits (`Z` when it has a zone). */
function canonicalTime(text: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d+))?\s*(Z|[+-]\d\d(?::?\d\d)?)?$/.exec(text.trim());
  if (!m) return `not a time: ${text}`;
  let ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  const zone = m[8];
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0)) * 60_000;
  }
  return `${new Date(ms).toISOString().slice(0, 19)}.${(m[7] ?? '').padEnd(6, '0').slice(0, 6)}${zone ? 'Z' : ''}`;
}

/** A value's text (null: null) in one spelling, by its column. */
function canonical(column: string, text: string | null): string | null {
  if (text === null) return null;
  if (NUMBERS.has(column)) return canonicalNumber(text);
  if (TIMES.has(column)) return canonicalTime(text);
  return text;
}

type Cells = Array<Array<string | null>>;
const canonicalRows = (rows: Cells): Cells => rows.map((r) => r.map((v, i) => canonical(COLUMNS[i]!, v)));

/** NDJSON read exactly: each member's number text as written, strings decoded. */
function fromNdjson(text: string): Cells {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => {
      const doc = scanDocument(line);
      const byName = new Map(
        members(line, doc).map((m) => [m.name, m.value.kind === 'null' ? null : m.value.kind === 'string' ? (JSON.parse(textOf(line, m.value)) as string) : textOf(line, m.value)]),
      );
      return COLUMNS.map((c) => byName.get(c) ?? null);
    });
}

/** RFC 4180 CSV: a quoted field may hold commas, quotes and newlines; an empty unquoted field is null. */
function fromCsv(text: string): Cells {
  const rows: Cells = [];
  let row: Array<string | null> = [];
  let i = 0;
  while (i < text.length) {
    let value: string | null;
    if (text[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        const j = text.indexOf('"', i);
        v += text.slice(i, j);
        i = j + 1;
        if (text[i] === '"') {
          v += '"';
          i++;
        } else break;
      }
      value = v;
    } else {
      const end = text.slice(i).search(/[,\n]/);
      const raw = end < 0 ? text.slice(i) : text.slice(i, i + end);
      i += raw.length;
      value = raw === '' ? null : raw;
    }
    row.push(value);
    if (text[i] === ',') i++;
    else {
      rows.push(row);
      row = [];
      i++;
    }
  }
  expect(rows[0]).toEqual([...COLUMNS]);
  return rows.slice(1);
}

/** The aligned table: columns start where the dashes of its second line do; an empty cell is null. */
function fromTable(text: string, columns: readonly string[]): Cells {
  const lines = text.trimEnd().split('\n');
  const starts = [...lines[1]!.matchAll(/-+/g)].map((m) => m.index!);
  return lines.slice(2).map((line) =>
    columns.map((_, i) => {
      const v = line.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : undefined).trimEnd();
      return v === '' ? null : v;
    }),
  );
}

describe('every output format names every stored value exactly', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: table, CSV, NDJSON, Parquet and the web pages against the engine's own text`, async ({ expect }) => {
      const dir = path.join(tmp.dir, db.name);
      mkdirSync(dir, { recursive: true });
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ ...FLOW, ...db.settings(dir) }, null, 2));
      const input = path.join(dir, 'edge.ndjson');
      writeFileSync(input, RECORDS.join('\n') + '\n');
      await scdOk(['apply', flowFile, '--input', input], dir);

      // What the engine holds: its own text of every value, in the export's order.
      const flow = loadFlowFile(flowFile);
      const held: Cells = await withDatabase(flow, {}, async (driver) => {
        const d = driver.dialect;
        const rows = await driver.query(
          `SELECT ${COLUMNS.map((c, i) => `CAST(${d.quote(c)} AS ${d.types.text}) AS c${i}`).join(', ')} FROM ${d.quote('edge')} ORDER BY ${d.quote('id')}, ${d.quote('__START_AT')}`,
        );
        return rows.map((r) => COLUMNS.map((_, i) => (r[`c${i}`] === null || r[`c${i}`] === undefined ? null : String(r[`c${i}`]))));
      });
      const expected = canonicalRows(held);
      // The values are the edge values given (the engine kept them; this test is about reading them).
      expect(expected.map((r) => r[2])).toEqual([null, '0', '999999999999999999e16', '1e0', '9007199254740993e15', '-1e-1']);
      expect(expected[4]![4]).toBe('9223372036854775807e18');
      expect(expected[4]![5]).toBe('-0');

      const out = async (format: string) => (await scdOk(['export', flowFile, '--format', format], dir)).stdout;
      expect(canonicalRows(fromNdjson(await out('ndjson'))), 'ndjson').toEqual(expected);
      expect(canonicalRows(fromCsv(await out('csv'))), 'csv').toEqual(expected);
      // The table cannot tell the empty string from null (both an empty cell): compared as such.
      const blank = (rows: Cells) => rows.map((r) => r.map((v) => (v === '' ? null : v)));
      const tableColumns = COLUMNS.filter((c) => c !== 's');
      const table = fromTable(await out('table'), COLUMNS);
      expect(
        canonicalRows(blank(table)).map((r) => r.filter((_, i) => COLUMNS[i] !== 's')),
        'table',
      ).toEqual(blank(expected).map((r) => r.filter((_, i) => COLUMNS[i] !== 's')));
      expect(tableColumns).toHaveLength(COLUMNS.length - 1);

      // Parquet, read back by DuckDB: each value's text.
      const parquet = path.join(dir, 'edge.parquet');
      await scdOk(['export', flowFile, '--format', 'parquet', '--out', parquet], dir);
      const duck = await openDriver(':memory:');
      try {
        const rows = await duck.query(`SELECT ${COLUMNS.map((c, i) => `CAST("${c}" AS VARCHAR) AS c${i}`).join(', ')} FROM read_parquet('${parquet.replace(/'/g, "''")}')`);
        const fromParquet = rows.map((r) => COLUMNS.map((_, i) => (r[`c${i}`] === null || r[`c${i}`] === undefined ? null : String(r[`c${i}`]))));
        expect(canonicalRows(fromParquet), 'parquet').toEqual(expected);
      } finally {
        await duck.close();
      }

      // The web pages: the key's page shows each of its values as the engine holds it.
      const server = await startServer({ flow, source: driverPerRequest(flow.database, { schema: flow.schema }), log: () => {} });
      try {
        const res = await fetch(new URL('/key?id=9007199254740993', server.url));
        const page = await res.text();
        expect(res.status).toBe(200);
        for (const shown of [
          '9007199254740993.0',
          '1234567890123456789012345678.0123456789',
          '9223372036854775807',
          '-9223372036854775808',
          '-0.1',
          'héllo ✓ 東京 🎉',
          '2025-12-31',
          '2024-12-31T18:30:00.000001Z',
        ])
          expect(page, shown).toContain(shown);
        expect(page).toMatch(/>-0</);
        expect(page).toMatch(/>(-0\.0000000001|-1e-10)</); // one number, in JavaScript's spelling or the engine's
        expect(page).toMatch(/>1e\+?308</);
        expect(page).not.toContain('9007199254740992');
      } finally {
        await server.close();
      }
    });
  }
});
