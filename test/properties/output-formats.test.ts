/**
 * Every output format gives back every stored value exactly — for the values change data really
 * holds (./wide-values.ts). A scenario is applied with `scd apply --input DIR --each` and written
 * with `scd export --out` as NDJSON, CSV, Parquet and a table (`.txt`), in-process (the CLI's
 * commands, scd-in-process.ts) on a database the CLI opens itself:
 * - NDJSON, read with every number as written, is the reference model's target;
 * - CSV, read field by field (an unquoted empty field is null, `""` the empty string), is the same rows;
 * - Parquet, read back by DuckDB, is the same rows;
 * - the table, which people read, shows every number exactly as NDJSON writes it.
 *
 * PostgreSQL runs on the server when SCD_TEST_POSTGRES_URL is set, else on a PGlite folder.
 */
import fc from 'fast-check';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { openDriver } from '../../src/index.js';
import { freshSchema } from '../engines.js';
import { fcParams, KINDS, PROPERTY_TIMEOUT_MS } from './arbitraries.js';
import { Model } from './model.js';
import { scdInProcess } from './scd-in-process.js';
import { canonRow, describeWide, JsonNumber, parseJsonExact, sortedRows, wideScenarioArb, type WideScenario } from './wide-values.js';

/** Cases per kind (FC_RUNS scales them); on PostgreSQL only the first kind: the CLI opens a PGlite folder per command, seconds each. */
const RUNS = 3;

/** Where the CLI keeps each case's database, per engine. */
const databases: Array<{ name: string; database: (dir: string) => { database: string; schema?: string } }> = [
  { name: 'duckdb', database: (dir) => ({ database: path.join(dir, 'db.duckdb') }) },
  process.env.SCD_TEST_POSTGRES_URL
    ? { name: 'postgres', database: () => ({ database: process.env.SCD_TEST_POSTGRES_URL!, schema: freshSchema() }) }
    : { name: 'pglite', database: (dir) => ({ database: `pglite://${path.join(dir, 'pg')}` }) },
];
const only = process.env.SCD_TEST_ENGINES?.split(',').map((s) => s.trim());

/** RFC 4180 CSV: rows of fields; a field is null when empty and unquoted. */
export function parseCsv(text: string): Array<Array<string | null>> {
  const rows: Array<Array<string | null>> = [];
  let row: Array<string | null> = [];
  let i = 0;
  while (i < text.length) {
    let field: string | null;
    if (text[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') (s += '"'), (i += 2);
        else if (text[i] === '"') break;
        else s += text[i++];
      }
      i++;
      field = s;
    } else {
      const start = i;
      while (i < text.length && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') i++;
      field = i === start ? null : text.slice(start, i);
    }
    row.push(field);
    if (text[i] === ',') i++;
    else {
      if (text[i] === '\r') i++;
      if (text[i] === '\n') i++;
      rows.push(row);
      row = [];
    }
  }
  return rows;
}

function csvRows(text: string, sc: WideScenario): Array<Record<string, unknown>> {
  const [header, ...lines] = parseCsv(text);
  return lines.map((fields) => {
    const r: Record<string, unknown> = {};
    header!.forEach((c, j) => {
      const f = fields[j] ?? null;
      // A struct (a tuple sequence's start and end) is written as its JSON text.
      r[c!] = f !== null && f.startsWith('{') && (c === '__START_AT' || c === '__END_AT') ? parseJsonExact(f) : f;
    });
    return canonRow(sc.kinds, r);
  });
}

async function parquetRows(file: string, dir: string, sc: WideScenario): Promise<Array<Record<string, unknown>>> {
  const driver = await openDriver(':memory:');
  const out = path.join(dir, 'parquet.ndjson');
  try {
    await driver.run(`COPY (SELECT * FROM read_parquet('${file.replace(/'/g, "''")}')) TO '${out.replace(/'/g, "''")}' (FORMAT JSON)`);
  } finally {
    await driver.close();
  }
  return ndjsonRows(readFileSync(out, 'utf8'), sc);
}

function ndjsonRows(text: string, sc: WideScenario): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => canonRow(sc.kinds, parseJsonExact(l) as Record<string, unknown>));
}

/** Every number NDJSON wrote, as written, that the table does not show as a whole cell. */
function numbersNotShown(ndjson: string, table: string): string[] {
  const cells = new Set(table.split('\n').flatMap((l) => l.split(/\s{2,}/).map((s) => s.trim())));
  const missing: string[] = [];
  const visit = (v: unknown) => {
    if (v instanceof JsonNumber) {
      if (!cells.has(v.raw)) missing.push(v.raw);
    } else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  for (const l of ndjson.split('\n').filter((x) => x.trim())) visit(parseJsonExact(l));
  return missing;
}

const show = (rows: Array<Record<string, unknown>>) => sortedRows(rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1))))));

for (const db of databases.filter((d) => !only || only.includes(d.name))) {
  describe(`${db.name}: every output format gives back every stored value`, () => {
    for (const kind of db.name === 'duckdb' ? KINDS : KINDS.slice(0, 1)) {
      it(
        `${kind.name}: NDJSON = the model; CSV, Parquet and the table = NDJSON`,
        async () => {
          await fc.assert(
            fc.asyncProperty(wideScenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              for (const b of sc.batches) model.apply(b.map((r) => r.canon));
              const expected = model.target().map((r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>);
              const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-formats-'));
              const why = describeWide(sc);
              const where = db.database(dir);
              try {
                const flowFile = path.join(dir, 'flow.json');
                writeFileSync(flowFile, JSON.stringify({ ...sc.flow, ...where }));
                sc.batches.forEach((b, i) => writeFileSync(path.join(dir, `b${String(i).padStart(3, '0')}.ndjson`), b.map((r) => r.line).join('\n') + '\n'));
                const applied = await scdInProcess(['apply', flowFile, '--input', ...sc.batches.map((_, i) => path.join(dir, `b${String(i).padStart(3, '0')}.ndjson`)), '--each', '--json']);
                expect(applied.stderr, why).toBe('');
                const problems: string[] = [];
                const text: Record<string, string> = {};
                for (const ext of ['ndjson', 'csv', 'parquet', 'txt']) {
                  const out = path.join(dir, `target.${ext}`);
                  const r = await scdInProcess(['export', flowFile, '--out', out]);
                  if (r.code !== 0) problems.push(`export --out target.${ext}: exit ${r.code}: ${r.stderr.trim()}`);
                  else if (ext !== 'parquet') text[ext] = readFileSync(out, 'utf8');
                }
                if (text.ndjson !== undefined) {
                  const ndjson = ndjsonRows(text.ndjson, sc);
                  if (JSON.stringify(show(ndjson)) !== JSON.stringify(show(expected)))
                    problems.push(`NDJSON is not the model's target:\n    got      ${show(ndjson).join('\n             ')}\n    expected ${show(expected).join('\n             ')}`);
                  if (text.csv !== undefined) {
                    const csv = csvRows(text.csv, sc);
                    if (JSON.stringify(show(csv)) !== JSON.stringify(show(ndjson)))
                      problems.push(`CSV differs from NDJSON:\n    csv    ${show(csv).join('\n           ')}\n    ndjson ${show(ndjson).join('\n           ')}`);
                  }
                  if (!problems.some((p) => p.includes('target.parquet'))) {
                    const parquet = await parquetRows(path.join(dir, 'target.parquet'), dir, sc);
                    if (JSON.stringify(show(parquet)) !== JSON.stringify(show(ndjson)))
                      problems.push(`Parquet differs from NDJSON:\n    parquet ${show(parquet).join('\n            ')}\n    ndjson  ${show(ndjson).join('\n            ')}`);
                  }
                  if (text.txt !== undefined) {
                    const missing = numbersNotShown(text.ndjson, text.txt);
                    if (missing.length) problems.push(`the table does not show ${missing.join(', ')} as stored:\n${text.txt}`);
                  }
                }
                expect(problems, why).toEqual([]);
              } finally {
                rmSync(dir, { recursive: true, force: true });
                // A server schema is the test's own: dropped with everything in it.
                if (where.schema) await (await PostgresDriver.connect(where.database, { schema: where.schema, dropSchemaOnClose: true })).close();
              }
            }),
            fcParams<[WideScenario]>(db.name === 'duckdb' ? RUNS : 2, 'duckdb', 1),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
