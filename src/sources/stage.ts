import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Driver, InputFile, StagedFiles } from '../dialects/driver.js';
import { LINE_COLUMN } from '../dialects/driver.js';
import { POSITION_COLUMNS } from '../flow/debezium-positions.js';
import type { Flow } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames, TMP } from '../store/names.js';
import { flattenDebezium } from './debezium.js';
import { stampProcessingTime } from './processing-time.js';

/**
 * Fill TMP.stage / TMP.rejects from input files, by the flow's source format. Debezium envelopes
 * are unwrapped to flat rows first (streamed, line by line); everything else is read by the engine.
 */
export async function stageInputs(driver: Driver, flow: Flow, files: InputFile[]): Promise<StagedInputs> {
  if (flow.processingTime) {
    const staged = await driver.stageFiles(uniqueFiles(files), TMP.stage, TMP.rejects);
    await stampProcessingTime(driver, flow, undefined, staged.lexical);
    // The staged table has a column the reader did not make: the commit looks its columns up.
    return { ...staged, columns: undefined, skipped: 0 };
  }
  if (flow.source?.format !== 'debezium') return { ...(await driver.stageFiles(uniqueFiles(files), TMP.stage, TMP.rejects)), skipped: 0 };
  // An existing target's stored model decides which positions its rows carry.
  const record = await readFlowRecord(driver, storeNames(flow.target));
  const positions = record ? POSITION_COLUMNS.filter((c) => record.model.source.some((s) => s.name === c)) : undefined;
  // The flattened rows live until the commit ends (StagedInputs.release): an engine may read them
  // again at any point of the commit.
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-dbz-'));
  const release = () => rmSync(dir, { recursive: true, force: true });
  try {
    let skipped = 0;
    let bads = 0;
    const flat: InputFile[] = [];
    const bad: InputFile[] = [];
    for (const [i, f] of files.entries()) {
      const good = path.join(dir, `good_${i}.ndjson`);
      const rej = path.join(dir, `bad_${i}.ndjson`);
      const scan = await flattenDebezium(f.path, good, rej, { positions });
      skipped += scan.tombstones;
      bads += scan.bad;
      if (scan.good) flat.push({ path: good, format: 'ndjson', label: f.label ?? f.path, numbered: true });
      if (scan.bad) bad.push({ path: rej, format: 'ndjson', label: f.label ?? f.path });
    }
    const staged = await driver.stageFiles(flat, TMP.stage, TMP.rejects);
    for (const b of bad) await driver.appendRejects(b.path, b.label!, TMP.rejects);
    return { lexical: staged.lexical, records: staged.records + bads, skipped, release };
  } catch (e) {
    release();
    throw e;
  }
}

export { LINE_COLUMN };

/** What a commit's staging read (StagedFiles), and the records it skipped by design (tombstones). */
export interface StagedInputs extends StagedFiles {
  skipped: number;
  /** Remove the files staging made for the engine to read, once the commit has ended. */
  release?: () => void;
}

/** Each file once, however often it was named (a file named twice is read once). */
function uniqueFiles(files: InputFile[]): InputFile[] {
  const seen = new Set<string>();
  return files.filter((f) => !seen.has(path.resolve(f.path)) && !!seen.add(path.resolve(f.path)));
}
