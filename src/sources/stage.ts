import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Driver, InputFile } from '../dialects/driver.js';
import { LINE_COLUMN } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames, TMP } from '../store/names.js';
import { POSITION_COLUMNS } from './debezium-positions.js';
import { flattenDebezium } from './debezium.js';

/**
 * Fill TMP.stage / TMP.rejects from input files, by the flow's source format. Debezium envelopes
 * are unwrapped to flat rows first (streamed, line by line); everything else is read by the engine.
 */
export async function stageInputs(driver: Driver, flow: Flow, files: InputFile[]): Promise<{ skipped: number }> {
  if (flow.source?.format !== 'debezium') {
    await driver.stageFiles(files, TMP.stage, TMP.rejects);
    return { skipped: 0 };
  }
  // An existing target's stored model decides which positions its rows carry.
  const record = await readFlowRecord(driver, storeNames(flow.target));
  const positions = record ? POSITION_COLUMNS.filter((c) => record.model.source.some((s) => s.name === c)) : undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-dbz-'));
  try {
    let skipped = 0;
    const flat: InputFile[] = [];
    const bad: InputFile[] = [];
    for (const [i, f] of files.entries()) {
      const good = path.join(dir, `good_${i}.ndjson`);
      const rej = path.join(dir, `bad_${i}.ndjson`);
      const scan = await flattenDebezium(f.path, good, rej, { positions });
      skipped += scan.tombstones;
      if (scan.good) flat.push({ path: good, format: 'ndjson', label: f.label ?? f.path });
      if (scan.bad) bad.push({ path: rej, format: 'ndjson', label: f.label ?? f.path });
    }
    await driver.stageFiles(flat, TMP.stage, TMP.rejects);
    for (const b of bad) await driver.appendRejects(b.path, b.label!, TMP.rejects);
    return { skipped };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export { LINE_COLUMN };
