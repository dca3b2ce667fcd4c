/**
 * A record over the size limit (files/record-limit.ts, docs/TYPES.md; decision 0201) is quarantined
 * with its whole raw text, which reads back byte for byte, so that it can be fixed and applied
 * again; the other records of its file apply. Through bin/scd on every engine (and a Debezium
 * envelope through the library), with a real record over the limit (the limit is no setting).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { MAX_RECORD_BYTES } from '../../src/files/record-limit.js';
import { applySourceWith, defineFlow } from '../../src/index.js';
import { engines } from '../engines.js';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, scdOk } from '../history/fixtures/history.js';
import { mkdir, quarantined } from './fixtures/util.js';

const tmp = cliTestDir();

const FLOW = { target: 'docs', keys: 'id', sequenceBy: 'ts' };

/** A record just over the limit: a long text with unicode, so that bytes and characters differ. */
function hugeRecord(): string {
  const piece = 'Zoë 東京 ';
  const blob = piece.repeat(Math.ceil((MAX_RECORD_BYTES + 1024) / Buffer.byteLength(piece)));
  return `{"id":2,"ts":"2026-03-01T10:00:00.5+05:30","amount":12345678901234567890.25,"blob":"${blob}"}`;
}

describe('a record over the size limit, through bin/scd', { timeout: 900_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: quarantined with its whole raw text; the others apply`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `huge-${db.name}`);
      const flowFile = path.join(dir, 'flow.json');
      writeFileSync(flowFile, JSON.stringify({ ...FLOW, ...db.settings(dir) }, null, 2));
      const huge = hugeRecord();
      expect(Buffer.byteLength(huge)).toBeGreaterThan(MAX_RECORD_BYTES);
      const lines = ['{"id":1,"ts":"2026-03-01T10:00:00+05:30","amount":1.25,"blob":"a"}', huge, '{"id":3,"ts":"2026-03-01T10:00:00Z","amount":-0.5,"blob":"ü"}'];
      writeFileSync(path.join(dir, 'docs.ndjson'), lines.join('\n') + '\n');
      const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--input', 'docs.ndjson', '--json'], dir)).stdout);
      expect([applied!.rowsRead, applied!.eventsApplied, applied!.quarantined]).toEqual([3, 2, 1]);
      const [q] = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout);
      expect([q!.line, q!.reason]).toEqual([2, 'record larger than 32 MiB']);
      expect((q!.raw as string).length).toBe(huge.length);
      expect(q!.raw === huge).toBe(true);
      // What a person does next: the raw text, as written, to a file to fix.
      const rawFile = path.join(dir, 'raw.txt');
      writeFileSync(rawFile, (await scdOk(['quarantine', flowFile, '--raw'], dir)).stdout);
      expect(readFileSync(rawFile, 'utf8').trimEnd() === huge).toBe(true);
    });
  }
});

describe('a Debezium envelope over the size limit', { timeout: 900_000 }, () => {
  for (const engine of engines) {
    it(`${engine.name}: quarantined with its whole raw text; the other envelopes apply`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `dbz-${engine.name}`);
      const envelope = (id: number, blob: string) =>
        `{"before":null,"after":{"id":${id},"blob":"${blob}"},"source":{"ts_ms":1717059600000,"lsn":${id}},"op":"c","ts_ms":1717059601000}`;
      const huge = envelope(2, 'Zoë 東京 '.repeat(Math.ceil((MAX_RECORD_BYTES + 1024) / Buffer.byteLength('Zoë 東京 '))));
      writeFileSync(path.join(dir, '0001.json'), [envelope(1, 'a'), huge, envelope(3, 'ü')].join('\n') + '\n');
      const flow = defineFlow({ target: 'blobs', keys: ['id'], source: { path: dir, format: 'debezium' } });
      const driver = await engine.open();
      try {
        const report = await applySourceWith(driver, flow);
        expect(report.results[0]).toMatchObject({ rowsRead: 3, eventsApplied: 2, quarantined: 1 });
        const q = await quarantined(driver, 'blobs');
        expect(q.map((x) => [x.line, x.reason])).toEqual([[2, 'record larger than 32 MiB']]);
        expect(q[0]!.raw.length).toBe(huge.length);
        expect(q[0]!.raw === huge).toBe(true);
      } finally {
        await driver.close();
      }
    });
  }
});
