/**
 * Flow fields through the CLI (as the flow takes them: test/unit/flow-fields.test.ts): a
 * Databricks name in a flow file is one stderr line with "did you mean" the flow field and how to
 * write it; a processing-time flow applies files one commit each, later files later versions; a
 * previousValues flow's export has the column.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, ndjson, scd, tempDir } from './fixtures/cli.js';

let tmp: { dir: string; cleanup: () => void };
let n = 0;
beforeAll(() => {
  tmp = tempDir();
});
afterAll(() => tmp.cleanup());

function folder(flowText: string, inputs: Record<string, Array<Record<string, unknown>>>): string {
  const dir = path.join(tmp.dir, `case${++n}`);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'flow.yaml'), flowText);
  for (const [name, rows] of Object.entries(inputs)) writeFileSync(path.join(dir, name), ndjson(rows));
  return dir;
}

describe('flow fields through scd', () => {
  it('sequence_by (Databricks): one line, "did you mean sequenceBy", how to write it', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequence_by: ts\n', { 'in.ndjson': [{ id: 1, ts: 1 }] });
    const r = await scd(['apply', 'flow.yaml', '--input', 'in.ndjson'], dir);
    expect(r.code).toBe(1);
    const lines = errorLines(r.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^scd: flow\.yaml: field "sequence_by": .*\(fix: did you mean "sequenceBy"\? \(sequence_by is what Databricks call it; write sequenceBy: .*\)\)$/);
  });

  it('processing time: one commit per file, each file a later version; previousValues exported', async () => {
    const dir = folder('target: t\nkeys: [id]\nsequenceBy: { processingTime: true }\npreviousValues: { city: previous_city }\n', {
      'a.ndjson': [{ id: 1, city: 'Pune' }],
      'b.ndjson': [{ id: 1, city: 'Goa' }],
    });
    const applied = await scd(['apply', 'flow.yaml', '--input', 'a.ndjson', 'b.ndjson', '--each'], dir);
    expect(applied.code, applied.stderr).toBe(0);
    const out = await scd(['export', 'flow.yaml', '--format', 'ndjson'], dir);
    expect(out.code, out.stderr).toBe(0);
    const rows = out.stdout
      .split('\n')
      .filter((l) => l)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r.city, r.previous_city, r.__END_AT === null])).toEqual([
      ['Pune', null, false],
      ['Goa', 'Pune', true],
    ]);
    expect(rows[0]!.__END_AT).toBe(rows[1]!.__START_AT);
    expect(Date.parse(String(rows[0]!.__START_AT))).toBeLessThan(Date.parse(String(rows[1]!.__START_AT)));
  });
});
