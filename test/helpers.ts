import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ApplyResult, applyRows, type Driver, defineFlow, type Flow, type FlowInput, readTargetWith } from '../src/index.js';
import { engines, type TestEngine } from './engines.js';

export type Rec = Record<string, unknown>;

/** Apply batches one by one on a fresh database; return the target and each commit's result. */
export async function applyBatches(input: FlowInput, batches: Rec[][], engine: TestEngine = engines[0]!): Promise<{ rows: Rec[]; results: ApplyResult[] }> {
  const flow = defineFlow(input);
  const driver = await engine.open();
  try {
    const results: ApplyResult[] = [];
    for (const b of batches) results.push(await applyRows(driver, flow, b));
    return { rows: await readTargetWith(driver, flow), results };
  } finally {
    await driver.close();
  }
}

export function tempDir(prefix = 'scdkit-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export type { Driver, Flow };
