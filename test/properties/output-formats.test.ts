/**
 * Every output format gives back every stored value exactly — for the values change data really
 * holds (./wide-values.ts). A scenario is applied with `scd apply --input FILE… --each` and written
 * with `scd export --out` as NDJSON, CSV, Parquet and a table (`.txt`), in-process (the CLI's
 * commands, test/cli-in-process.ts) on a database the CLI opens itself (PGlite: through the library):
 * - NDJSON, read with every number as written, is the reference model's target;
 * - CSV, read field by field (an unquoted empty field is null, `""` the empty string), is the same rows;
 * - Parquet, read back by DuckDB, is the same rows;
 * - the table, which people read, shows every number exactly as NDJSON writes it.
 *
 * PostgreSQL runs on the server when SCD_TEST_POSTGRES_URL is set, else on PGlite.
 */

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderTable } from '../../src/cli/print.js';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { exactNumber } from '../../src/files/json-number.js';
import { applyFiles, defineFlow, type OutputFormat, openDriver, readRows, resolveInputs, targetQuery, writeRows } from '../../src/index.js';
import { valueText } from '../../src/query/output.js';
import { scdInProcess } from '../cli-in-process.js';
import { engines, freshSchema, type TestEngine } from '../engines.js';
import { fcParams, KINDS, PROPERTY_TIMEOUT_MS } from './arbitraries.js';
import { Model } from './model.js';
import { canonOn, canonRow, describeWide, JsonNumber, parseJsonExact, sortedRows, type WideScenario, wideScenarioArb } from './wide-values.js';

/** Cases per kind (FC_RUNS scales them). */
const RUNS = 4;

const EXTENSIONS = ['ndjson', 'csv', 'parquet', 'txt'];
const batchFile = (dir: string, i: number) => path.join(dir, `b${String(i).padStart(3, '0')}.ndjson`);

/**
 * Apply a scenario's batches (written as batchFile(dir, i)) and write the target as
 * dir/target.<ext> for each of EXTENSIONS; returns what went wrong.
 */
type Writer = (sc: WideScenario, dir: string) => Promise<string[]>;

/** Through the CLI in-process: `scd apply --input … --each`, then `scd export --out target.<ext>`. */
function cliWriter(where: (dir: string) => { database: string; schema?: string }): Writer {
  return async (sc, dir) => {
    const w = where(dir);
    try {
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ ...sc.flow, ...w }));
      const applied = await scdInProcess(['apply', flowFile, '--input', ...sc.batches.map((_, i) => batchFile(dir, i)), '--each', '--json']);
      if (applied.code !== 0) return [`scd apply: exit ${applied.code}: ${applied.stderr.trim()}`];
      const problems: string[] = [];
      for (const ext of EXTENSIONS) {
        const r = await scdInProcess(['export', flowFile, '--out', path.join(dir, `target.${ext}`)]);
        if (r.code !== 0) problems.push(`export --out target.${ext}: exit ${r.code}: ${r.stderr.trim()}`);
      }
      return problems;
    } finally {
      // A server schema is the test's own: dropped with everything in it.
      if (w.schema) await (await PostgresDriver.connect(w.database, { schema: w.schema, dropSchemaOnClose: true })).close();
    }
  };
}

/**
 * Through the library on the test's engine (PGlite: the CLI would open a PGlite folder per command,
 * seconds each): applyFiles, writeRows, and the table as `scd export` renders it (readRows + renderTable).
 */
function libraryWriter(engine: TestEngine): Writer {
  return async (sc, dir) => {
    const flow = defineFlow(sc.flow);
    const driver = await engine.open();
    try {
      for (const i of sc.batches.keys()) await applyFiles(driver, flow, resolveInputs([batchFile(dir, i)]));
      const query = await targetQuery(driver, flow);
      const problems: string[] = [];
      for (const ext of EXTENSIONS) {
        const out = path.join(dir, `target.${ext}`);
        try {
          if (ext === 'txt')
            writeFileSync(
              out,
              renderTable(
                query.columns.map((c) => c.name),
                await readRows(driver, query),
              ),
            );
          else await writeRows(driver, query, { format: ext as OutputFormat, out });
        } catch (e) {
          problems.push(`writing target.${ext}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
        }
      }
      return problems;
    } finally {
      await driver.close();
    }
  };
}

/** DuckDB on a file through the CLI; PostgreSQL on the server through the CLI when SCD_TEST_POSTGRES_URL is set, else PGlite through the library. */
const writers: Array<{ name: string; write: Writer }> = [
  { name: 'duckdb', write: cliWriter((dir) => ({ database: path.join(dir, 'db.duckdb') })) },
  process.env.SCD_TEST_POSTGRES_URL
    ? { name: 'postgres', write: cliWriter(() => ({ database: process.env.SCD_TEST_POSTGRES_URL!, schema: freshSchema() })) }
    : { name: 'pglite', write: libraryWriter(engines.find((e) => e.name === 'pglite')!) },
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
        if (text[i] === '"' && text[i + 1] === '"') {
          s += '"';
          i += 2;
        } else if (text[i] === '"') break;
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
      r[c!] = f?.startsWith('{') && (c === '__START_AT' || c === '__END_AT') ? parseJsonExact(f) : f;
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

/**
 * Every number NDJSON wrote, as written, that the table does not show: a column's number as a
 * whole cell, as written or as QUERYING.md "Values as read" spells it for a person (JavaScript's
 * spelling when it names the same value: `-0` for `-0.0`; decision 0172); a part of a struct (a tuple sequence's start and end, which the table shows as its
 * JSON text, as CSV does) as a member's value inside a cell.
 */
function numbersNotShown(ndjson: string, table: string): string[] {
  const cellList = table.split('\n').flatMap((l) => l.split(/\s{2,}/).map((s) => s.trim()));
  const cells = new Set(cellList);
  const missing: string[] = [];
  const inStruct = (raw: string) => cellList.some((c) => c.startsWith('{') && (c.includes(`:${raw},`) || c.includes(`:${raw}}`)));
  const visit = (v: unknown, nested: boolean) => {
    if (v instanceof JsonNumber) {
      if (!(nested ? inStruct(v.raw) : cells.has(v.raw) || cells.has(valueText(exactNumber(v.raw))))) missing.push(v.raw);
    } else if (v && typeof v === 'object')
      Object.values(v).forEach((x) => {
        visit(x, true);
      });
  };
  for (const l of ndjson.split('\n').filter((x) => x.trim()))
    Object.values(parseJsonExact(l) as Record<string, unknown>).forEach((v) => {
      visit(v, false);
    });
  return missing;
}

const show = (rows: Array<Record<string, unknown>>) => sortedRows(rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1))))));

for (const db of writers.filter((d) => !only || only.includes(d.name))) {
  describe(`${db.name}: every output format gives back every stored value`, () => {
    for (const kind of KINDS) {
      it(
        `${kind.name}: NDJSON = the model; CSV, Parquet and the table = NDJSON`,
        async () => {
          await fc.assert(
            fc.asyncProperty(wideScenarioArb(kind), async (sc) => {
              const model = new Model(sc.spec);
              for (const b of sc.batches) model.apply(b.map((r) => canonOn(db.name, sc, r)));
              const expected = model.target().map((r) => JSON.parse(JSON.stringify(r)) as Record<string, unknown>);
              const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-formats-'));
              const why = describeWide(sc);
              try {
                sc.batches.forEach((b, i) => {
                  writeFileSync(batchFile(dir, i), b.map((r) => r.line).join('\n') + '\n');
                });
                const problems = await db.write(sc, dir);
                const text: Record<string, string> = {};
                for (const ext of ['ndjson', 'csv', 'txt']) if (existsSync(path.join(dir, `target.${ext}`))) text[ext] = readFileSync(path.join(dir, `target.${ext}`), 'utf8');
                if (text.ndjson !== undefined) {
                  const ndjson = ndjsonRows(text.ndjson, sc);
                  if (JSON.stringify(show(ndjson)) !== JSON.stringify(show(expected)))
                    problems.push(
                      `NDJSON is not the model's target:\n    got      ${show(ndjson).join('\n             ')}\n    expected ${show(expected).join('\n             ')}`,
                    );
                  if (text.csv !== undefined) {
                    const csv = csvRows(text.csv, sc);
                    if (JSON.stringify(show(csv)) !== JSON.stringify(show(ndjson)))
                      problems.push(`CSV differs from NDJSON:\n    csv    ${show(csv).join('\n           ')}\n    ndjson ${show(ndjson).join('\n           ')}`);
                  }
                  if (existsSync(path.join(dir, 'target.parquet'))) {
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
              }
            }),
            fcParams<[WideScenario]>(RUNS, db.name),
          );
        },
        PROPERTY_TIMEOUT_MS,
      );
    }
  });
}
