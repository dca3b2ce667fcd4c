/**
 * docs/DATABRICKS.md says what its readers will act on; this keeps it true:
 * - every YAML block is a valid flow, and the example's block is examples/auto-cdc-users/flow.yaml
 *   as committed, with the fields the mapping table gives for Databricks' arguments;
 * - each row of the AUTO CDC mapping table names a flow field that exists, the same field scdkit's
 *   refusal of that Databricks name points to, and every argument the page promises is in it;
 * - `catalog.schema` is a flow schema (for Spark; PostgreSQL refuses it), and a flow without
 *   `schema` names none (each engine's default: Spark's `default`, PostgreSQL's `public`);
 * - the example, applied in several cuts and orders on every engine, gives the page's two tables
 *   (Databricks' SCD type 2 history, then the same after a late truncate).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sparkSchemaName } from '../../src/dialects/spark/spark-driver.js';
import { foreignName } from '../../src/flow/foreign-names.js';
import { flowSchema } from '../../src/flow/schema.js';
import { applyFiles, type Driver, defineFlow, type FlowInput, loadFlowFile, openDriver, readTargetWith, resolveInputs, ScdError } from '../../src/index.js';
import { engines } from '../engines.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = readFileSync(path.join(ROOT, 'docs', 'DATABRICKS.md'), 'utf8');
const EXAMPLE = path.join(ROOT, 'examples', 'auto-cdc-users');
const yamlBlocks = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);

/** Every markdown table whose header row starts with `header`, as rows of cells (an escaped `\|` stays in its cell). */
function tables(header: string): string[][][] {
  const lines = DOC.split('\n');
  const out: string[][][] = [];
  lines.forEach((l, i) => {
    if (!l.startsWith(header)) return;
    const rows: string[][] = [];
    for (const line of lines.slice(i + 2)) {
      if (!line.startsWith('|')) break;
      rows.push(
        line
          .split(/(?<!\\)\|/)
          .slice(1, -1)
          .map((c) => c.trim()),
      );
    }
    out.push(rows);
  });
  return out;
}

/** The backticked names of a cell: `a` / `b` → [a, b]. */
const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

describe('docs/DATABRICKS.md: its flows', () => {
  it('every YAML block is a valid flow', () => {
    expect(yamlBlocks.length).toBeGreaterThanOrEqual(2);
    for (const block of yamlBlocks) expect(() => defineFlow(parseYaml(block) as FlowInput), block).not.toThrow();
  });

  it("the example's block is examples/auto-cdc-users/flow.yaml, with the fields the mapping gives", () => {
    expect(yamlBlocks).toContain(readFileSync(path.join(EXAMPLE, 'flow.yaml'), 'utf8'));
    const flow = loadFlowFile(path.join(EXAMPLE, 'flow.yaml'));
    expect({
      keys: flow.keys,
      sequenceBy: flow.sequenceBy,
      applyAsDeletes: flow.applyAsDeletes,
      applyAsTruncates: flow.applyAsTruncates,
      exceptColumns: flow.exceptColumns,
      storedAs: flow.storedAs,
      schema: flow.schema,
    }).toEqual({
      keys: ['userId'],
      sequenceBy: ['sequenceNum'],
      applyAsDeletes: "operation = 'DELETE'",
      applyAsTruncates: "operation = 'TRUNCATE'",
      exceptColumns: ['operation', 'sequenceNum'],
      storedAs: 'scd2',
      schema: 'cdc_data',
    });
  });

  it('catalog.schema is a flow schema (Spark names it `catalog`.`schema`; PostgreSQL refuses it at connect), a dotted target is not, and a flow without schema names none (the engine default)', async () => {
    const base: FlowInput = { target: 'users', keys: 'userId', sequenceBy: 'sequenceNum' };
    expect(defineFlow({ ...base, schema: 'main.analytics' }).schema).toBe('main.analytics');
    expect(sparkSchemaName('main.analytics')).toBe('`main`.`analytics`');
    expect(sparkSchemaName('cdc_data')).toBe('`cdc_data`');
    expect(() => defineFlow({ ...base, schema: 'a.b.c' })).toThrow(/a plain schema name, or catalog.schema on Spark/);
    expect(() => defineFlow({ ...base, target: 'main.analytics.users' })).toThrow(/plain table name/);
    expect(defineFlow(base).schema).toBeUndefined();
    const e = await openDriver('pglite://memory', { schema: 'main.analytics' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ScdError);
    expect((e as ScdError).problem).toBe(`schema "main.analytics" is a catalog and a schema, which only Spark has; PostgreSQL's schema is one name`);
  });
});

describe('docs/DATABRICKS.md: the AUTO CDC mapping', () => {
  const [rows = []] = tables('| `create_auto_cdc_flow` |');
  const fields = new Set(Object.keys(flowSchema.shape));

  it('covers every argument the page promises', () => {
    expect(rows.length).toBeGreaterThan(0);
    const args = rows.flatMap((r) => ticked(r[0]!));
    for (const a of [
      'target',
      'source',
      'keys',
      'sequence_by',
      'ignore_null_updates',
      'apply_as_deletes',
      'apply_as_truncates',
      'column_list',
      'except_column_list',
      'stored_as_scd_type',
      'track_history_column_list',
      'track_history_except_column_list',
      'name',
      'once',
    ])
      expect(args, a).toContain(a);
  });

  it('maps each argument to a flow field that exists, the one scdkit points to when refusing the name', () => {
    for (const [python, , flowCell] of rows) {
      const arg = ticked(python!)[0]!;
      if (flowCell === '—') {
        // It may say why no field is needed, but points to none.
        expect(foreignName(arg)?.field, `${arg} has no field, so scdkit must not point to one`).toBeUndefined();
        continue;
      }
      const field = ticked(flowCell!)[0]!;
      expect(fields, `${arg} → ${field}`).toContain(field);
      const refused = foreignName(arg);
      if (refused) expect(refused.field, `the refusal of ${arg}`).toBe(field);
      else expect(arg, `${arg} is accepted as is only when it is the flow's own name`).toBe(field);
    }
  });
});

describe('docs/DATABRICKS.md: the example gives the tables shown', () => {
  const [history, truncated] = tables('| userId | name | city | __START_AT | __END_AT |');
  const inputs = resolveInputs([path.join(EXAMPLE, 'changes')]).map((f) => f.path);
  const truncate = path.join(EXAMPLE, 'truncate.ndjson');
  /** The target as the page's tables write it: every value as text, a null as an empty cell. */
  const cells = (rows: Array<Record<string, unknown>>) =>
    rows.map((r) => ['userId', 'name', 'city', '__START_AT', '__END_AT'].map((c) => (r[c] === null || r[c] === undefined ? '' : String(r[c]))));

  it('shows two tables of seven versions', () => {
    expect(inputs).toHaveLength(3);
    expect(history).toHaveLength(7);
    expect(truncated).toHaveLength(7);
  });

  for (const engine of engines) {
    const run = async (commits: string[][]): Promise<{ before: string[][]; after: string[][] }> => {
      const driver: Driver = await engine.open();
      try {
        const flow = loadFlowFile(path.join(EXAMPLE, 'flow.yaml'));
        for (const files of commits) await applyFiles(driver, flow, resolveInputs(files));
        const before = cells(await readTargetWith(driver, flow));
        await applyFiles(driver, flow, resolveInputs([truncate]));
        return { before, after: cells(await readTargetWith(driver, flow)) };
      } finally {
        await driver.close();
      }
    };

    describe(engine.name, () => {
      it('one commit per file, in name order', async () => {
        expect(await run(inputs.map((f) => [f]))).toEqual({ before: history, after: truncated });
      });

      it('one commit per file, in reverse order', async () => {
        expect(await run([...inputs].reverse().map((f) => [f]))).toEqual({ before: history, after: truncated });
      });

      it('all files in one commit', async () => {
        expect(await run([inputs])).toEqual({ before: history, after: truncated });
      });
    });
  }
});
