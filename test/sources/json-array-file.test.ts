/**
 * A `.json` file that is one array, with one broken element (TYPES.md "Records, as written";
 * decision 0200): the good elements apply, the broken one is quarantined with its whole text and
 * its element number, and once fixed it applies as a record of its own. A file cut short (still
 * being uploaded) stops the run in one line before anything changes, and applies whole once it is
 * complete. Through bin/scd, by --input and from a landing folder, on every engine.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'vitest';
import { cliDatabases, cliTestDir } from '../history/fixtures/cli-databases.js';
import { parseNdjson, scd, scdOk } from '../history/fixtures/history.js';
import { mkdir } from './fixtures/util.js';

const tmp = cliTestDir();

const FLOW = { target: 'orders', keys: 'id', sequenceBy: 'ts', columnTypes: { amount: 'decimal(20,2)' } };
const COUNT = 1000;
const BROKEN = 500;

/** Element i (1-based) as written: a zoned time, an exact decimal, a big integer, unicode. */
function element(i: number): string {
  const minute = String(i % 60).padStart(2, '0');
  return `{"id":${i},"ts":"2026-03-0${1 + (i % 9)}T10:${minute}:00.123456+05:30","amount":${i}1234567890123.45,"ref":${9007199254740993n + BigInt(i)},"name":"Zoë ${i} 東京"}`;
}

/** The array, element BROKEN missing its closing brace; one element a line, as writers indent. */
function brokenArray(): { text: string; broken: string } {
  const parts = Array.from({ length: COUNT }, (_, k) => element(k + 1));
  const broken = parts[BROKEN - 1]!.slice(0, -1);
  parts[BROKEN - 1] = broken;
  return { text: `[\n  ${parts.join(',\n  ')}\n]\n`, broken };
}

function project(dir: string, settings: object, source?: object): string {
  const flowFile = path.join(dir, 'flow.json');
  writeFileSync(flowFile, JSON.stringify({ ...FLOW, ...settings, ...(source ? { source } : {}) }, null, 2));
  return flowFile;
}

async function currentRows(flowFile: string, dir: string) {
  const rows = parseNdjson((await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout);
  return rows.filter((r) => r.__END_AT === null);
}

describe('a JSON array with one broken element, through bin/scd', { timeout: 600_000 }, () => {
  for (const db of cliDatabases) {
    it(`${db.name}: --input applies the ${COUNT - 1} good elements and quarantines the broken one whole; fixed, it applies`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `input-${db.name}`);
      const flowFile = project(dir, db.settings(dir));
      const { text, broken } = brokenArray();
      writeFileSync(path.join(dir, 'orders.json'), text);
      const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--input', 'orders.json', '--json'], dir)).stdout);
      expect([applied!.rowsRead, applied!.eventsApplied, applied!.quarantined]).toEqual([COUNT, COUNT - 1, 1]);
      const [q] = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout);
      expect(q).toMatchObject({ line: BROKEN, raw: broken, reason: expect.stringMatching(/^malformed JSON: .* of the element$/) });
      expect(await currentRows(flowFile, dir)).toHaveLength(COUNT - 1);

      // What a person does next: take the raw text, fix it, apply it as a file of its own.
      const raw = (await scdOk(['quarantine', flowFile, '--raw'], dir)).stdout.trim();
      expect(raw).toBe(broken);
      writeFileSync(path.join(dir, 'fixed.ndjson'), `${raw}}\n`);
      await scdOk(['apply', flowFile, '--input', 'fixed.ndjson'], dir);
      const rows = await currentRows(flowFile, dir);
      expect(rows).toHaveLength(COUNT);
      const fixed = rows.find((r) => String(r.id) === String(BROKEN))!;
      expect(fixed).toMatchObject({ name: `Zoë ${BROKEN} 東京` });
      const out = (await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout;
      expect(out).toContain(`"amount":${BROKEN}1234567890123.45`);
      expect(out).toContain(`"ref":${9007199254740993n + BigInt(BROKEN)}`);
    });

    it(`${db.name}: from a landing folder the same; a file cut short stops the run before anything changes, and applies once whole`, async ({ expect }) => {
      const dir = mkdir(tmp.dir, `landing-${db.name}`);
      const landing = path.join(dir, 'landing');
      mkdirSync(landing);
      const flowFile = project(dir, db.settings(dir), { path: 'landing' });
      const { text, broken } = brokenArray();
      writeFileSync(path.join(landing, '001.json'), text);
      const [applied] = parseNdjson((await scdOk(['apply', flowFile, '--json'], dir)).stdout);
      expect([applied!.rowsRead, applied!.eventsApplied, applied!.quarantined]).toEqual([COUNT, COUNT - 1, 1]);
      const [q] = parseNdjson((await scdOk(['quarantine', flowFile, '--format', 'ndjson'], dir)).stdout);
      expect(q).toMatchObject({ line: BROKEN, raw: broken });
      const before = (await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout;

      // A second file still being uploaded: cut inside an element.
      const whole = `[${Array.from({ length: 20 }, (_, k) => element(COUNT + k + 1)).join(',')}]`;
      writeFileSync(path.join(landing, '002.json'), whole.slice(0, Math.floor(whole.length / 2)));
      const cut = await scd(['apply', flowFile], dir);
      expect(cut.code).not.toBe(0);
      const lines = cut.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('  '));
      expect(lines).toEqual([
        expect.stringMatching(/002\.json: the JSON array ends inside its element \d+, before it closes: .*nothing was applied \(fix: apply it again once the file is whole/),
      ]);
      expect((await scdOk(['export', flowFile, '--format', 'ndjson'], dir)).stdout).toBe(before);

      // The upload completes: the file applies whole.
      writeFileSync(path.join(landing, '002.json'), whole);
      const [second] = parseNdjson((await scdOk(['apply', flowFile, '--json'], dir)).stdout);
      expect([second!.rowsRead, second!.eventsApplied, second!.quarantined]).toEqual([20, 20, 0]);
      expect(await currentRows(flowFile, dir)).toHaveLength(COUNT - 1 + 20);
    });
  }
});
