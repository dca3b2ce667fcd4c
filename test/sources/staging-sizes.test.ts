import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LARGE_STAGE } from '../../src/dialects/driver.js';
import { applyFiles, defineFlow, readTargetWith } from '../../src/index.js';
import { engines } from '../engines.js';
import { recordStatements } from '../plan/recorded-statements.js';

/**
 * Staging frees what it made to read a file (its lines, its parsed records, helper columns) at
 * once only from LARGE_STAGE records; a smaller file's go with the commit's scratch, at no
 * statement (docs/decisions/0056-scratch-is-freed-early-only-when-large.md). Both sizes read the same: every record
 * accounted for, a bad one quarantined at its line, and nothing of staging left after the commit.
 */
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'scd-staging-sizes-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flow = defineFlow({ name: 'sizes', target: 'dim', keys: ['id'], sequenceBy: 'ts', storedAs: 'scd1' });
const helpers = ['_scd_lines_0', '_scd_records_0', '_scd_part_0', '_scd_stage', '_scd_rejects'];

/** `n` records, with a blank line and a line that is JSON but no object after the first. */
function file(name: string, n: number): string {
  const lines = Array.from({ length: n }, (_, i) => `{"id":${i},"ts":1,"city":"c${i % 97}"}`);
  lines.splice(1, 0, '', '[1,2]');
  const f = path.join(dir, name);
  writeFileSync(f, lines.join('\n') + '\n');
  return f;
}

for (const engine of engines) {
  describe(`staging a small and a large file (${engine.name})`, () => {
    for (const [size, n] of [
      ['small', 10],
      ['large', LARGE_STAGE],
    ] as const) {
      it(`${size}: every record read, the bad one quarantined at its line, staging's tables freed ${size === 'large' ? 'while staging' : 'with the commit'}`, {
        timeout: 120_000,
      }, async () => {
        const driver = await engine.open();
        try {
          const statements = recordStatements(driver);
          const result = await applyFiles(driver, flow, [{ path: file(`${size}.ndjson`, n), format: 'ndjson' }]);
          expect(result).toMatchObject({ rowsRead: n + 1, eventsApplied: n, quarantined: 1 });
          const rows = await driver.query(`SELECT line, reason FROM "_scd_dim_quarantine"`);
          expect(rows.map((r) => [Number(r.line), r.reason])).toEqual([[3, 'not a JSON object']]);
          expect((await readTargetWith(driver, flow)).length).toBe(n);
          // A large file's lines go as soon as its records are read, in staging (before BEGIN).
          const begin = statements.findIndex((s) => /^BEGIN/.test(s));
          const dropsLines = statements.slice(0, begin).some((s) => /^DROP TABLE "_scd_lines_0"/.test(s));
          expect(dropsLines).toBe(size === 'large');
          for (const t of helpers) expect(await driver.columns(t), t).toBeUndefined();
        } finally {
          await driver.close();
        }
      });
    }
  });
}
