/**
 * A few cases of the every-path property through real `bin/scd` processes (the in-process runs of
 * every-path.test.ts and output-formats.test.ts cover the many): each batch lands in the flow's
 * source folder and `scd apply FLOW` commits it; the same batches through `scd apply FLOW --input
 * DIR --each`; then `scd rebuild` and `scd export --out` of each. Both targets, before and after
 * the rebuild, must be the reference model's, read back exactly.
 *
 * DuckDB on a file; PostgreSQL on the server when SCD_TEST_POSTGRES_URL is set. Not on PGlite: each
 * process opens its PGlite folder anew, which makes a case far too slow for the suite
 * (docs/decisions/0035-a-pglite-folder-is-opened-once-per-process.md has the figure; PGlite walks
 * the same paths in-process in every-path.test.ts). Needs `npm run build` (bin/scd runs dist/).
 */

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PostgresDriver } from '../../src/dialects/postgres/index.js';
import { scdProcess } from '../e2e/fixtures/cli.js';
import { freshSchema } from '../engines.js';
import { fcParams, KINDS, PROPERTY_TIMEOUT_MS } from './arbitraries.js';
import { Model } from './model.js';
import { canonOn, canonRow, describeWide, parseJsonExact, sortedRows, type WideScenario, wideScenarioArb } from './wide-values.js';

/** Cases per engine (FC_RUNS scales them): a process per command. */
const RUNS = 2;

const databases: Array<{ name: string; where: (dir: string) => { database: string; schema?: string } }> = [
  { name: 'duckdb', where: (dir) => ({ database: path.join(dir, `${Math.random().toString(36).slice(2)}.duckdb`) }) },
  ...(process.env.SCD_TEST_POSTGRES_URL ? [{ name: 'postgres', where: () => ({ database: process.env.SCD_TEST_POSTGRES_URL!, schema: freshSchema() }) }] : []),
];
const only = process.env.SCD_TEST_ENGINES?.split(',').map((s) => s.trim());

const canonical = (text: string, sc: WideScenario) =>
  sortedRows(
    text
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.stringify(Object.fromEntries(Object.entries(canonRow(sc.kinds, parseJsonExact(l) as Record<string, unknown>)).sort(([a], [b]) => (a < b ? -1 : 1))))),
  );

for (const db of databases.filter((d) => !only || only.includes(d.name))) {
  describe(`${db.name}: bin/scd — landing folder and --input --each, then rebuild`, () => {
    const kind = KINDS[0]!;
    it(
      'both give the model, before and after scd rebuild',
      async () => {
        await fc.assert(
          fc.asyncProperty(wideScenarioArb(kind), async (sc) => {
            const model = new Model(sc.spec);
            for (const b of sc.batches) model.apply(b.map((r) => canonOn(db.name, sc, r)));
            const expected = sortedRows(
              model
                .target()
                .map((r) => JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(r)) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))))),
            );
            const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-processes-'));
            const wheres: Array<{ database: string; schema?: string }> = [];
            const problems: string[] = [];
            try {
              const land = path.join(dir, 'land');
              const each = path.join(dir, 'each');
              mkdirSync(land);
              mkdirSync(each);
              const flows = {
                landing: { ...sc.flow, source: { path: 'land' }, ...db.where(dir) },
                each: { ...sc.flow, ...db.where(dir) },
              };
              for (const [name, f] of Object.entries(flows)) {
                wheres.push({ database: f.database, schema: f.schema });
                writeFileSync(path.join(dir, `${name}.json`), JSON.stringify(f));
              }
              const run = async (args: string[]) => {
                // Real processes: the point of this file (every-path.test.ts runs the same in-process).
                const r = await scdProcess(args, dir);
                if (r.code !== 0) problems.push(`scd ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`);
                return r.code === 0;
              };
              for (const [i, b] of sc.batches.entries()) {
                const name = `b${String(i).padStart(3, '0')}.ndjson`;
                const text = b.map((r) => r.line).join('\n') + '\n';
                writeFileSync(path.join(land, name), text);
                writeFileSync(path.join(each, name), text);
                await run(['apply', 'landing.json']);
              }
              await run(['apply', 'each.json', '--input', 'each', '--each']);
              for (const name of Object.keys(flows)) {
                for (const when of ['before', 'after']) {
                  if (when === 'after' && !(await run(['rebuild', `${name}.json`]))) continue;
                  if (!(await run(['export', `${name}.json`, '--out', `${name}-${when}.ndjson`]))) continue;
                  const got = canonical(readFileSync(path.join(dir, `${name}-${when}.ndjson`), 'utf8'), sc);
                  if (JSON.stringify(got) !== JSON.stringify(expected))
                    problems.push(
                      `${name}, ${when} the rebuild: not the model's target:\n    got      ${got.join('\n             ')}\n    expected ${expected.join('\n             ')}`,
                    );
                }
              }
              expect(problems, describeWide(sc)).toEqual([]);
            } finally {
              rmSync(dir, { recursive: true, force: true });
              for (const w of wheres) if (w.schema) await (await PostgresDriver.connect(w.database, { schema: w.schema, dropSchemaOnClose: true })).close();
            }
          }),
          fcParams<[WideScenario]>(RUNS, 'duckdb', 1),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  });
}
