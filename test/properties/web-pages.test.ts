/**
 * The web pages show every stored value exactly — for the values change data really holds
 * (./wide-values.ts). A scenario is applied batch by batch; then `scd serve`'s app (startServer)
 * answers, for every key of the target, its key page, and for every commit its commit page. Each
 * page answers 200, and every number of every version of the key is a cell of the key page, as
 * QUERYING.md "Values as read" spells it for a person (JavaScript's spelling when it names the same
 * value: -0, 1e+308; else NDJSON's exact text: 9007199254740993, 9007199254740993.0; decision
 * 0172), and every text value (unicode, with quotes and a newline) is on it, HTML-escaped.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactNumber } from '../../src/files/json-number.js';
import { applyFiles, defineFlow, resolveInputs, sharedDriver, startServer, targetQuery, writeRows } from '../../src/index.js';
import { valueText } from '../../src/query/output.js';
import { engines } from '../engines.js';
import { fcParams, KINDS, PROPERTY_TIMEOUT_MS } from './arbitraries.js';
import { describeWide, JsonNumber, parseJsonExact, type WideScenario, wideScenarioArb } from './wide-values.js';

const RUNS = 3;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A number as a person reads it (QUERYING.md "Values as read"), from its NDJSON text. */
const shownNumber = (raw: string) => valueText(exactNumber(raw));

/** What of a stored row a page must show: each number as written, each text HTML-escaped. */
function shownValues(row: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [c, v] of Object.entries(row)) {
    if (c === '__START_AT' || c === '__END_AT') continue; // a tuple sequence's struct is shown as JSON text
    if (v instanceof JsonNumber) out.push(`>${shownNumber(v.raw)}<`);
    else if (typeof v === 'string' && v !== '') out.push(escapeHtml(v));
  }
  return out;
}

for (const engine of engines) {
  describe(`${engine.name}: the web pages show every stored value`, () => {
    const kind = KINDS[0]!;
    it(
      'every key page and commit page answers, and shows each version exactly',
      async () => {
        await fc.assert(
          fc.asyncProperty(wideScenarioArb(kind), async (sc) => {
            const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-web-'));
            const flow = defineFlow(sc.flow);
            const driver = await engine.open();
            const server = await startServer({ flow, source: sharedDriver(driver, true), port: 0, pageSize: 1000, log: () => {} });
            const problems: string[] = [];
            try {
              for (const [i, b] of sc.batches.entries()) {
                const file = path.join(dir, `b${i}.ndjson`);
                writeFileSync(file, b.map((r) => r.line).join('\n') + '\n');
                await applyFiles(driver, flow, resolveInputs([file]));
              }
              const out = path.join(dir, 'target.ndjson');
              await writeRows(driver, await targetQuery(driver, flow), { format: 'ndjson', out });
              const rows = readFileSync(out, 'utf8')
                .split('\n')
                .filter((l) => l.trim())
                .map((l) => parseJsonExact(l) as Record<string, unknown>);
              const get = async (page: string) => {
                const res = await fetch(new URL(page, server.url));
                const body = await res.text();
                if (res.status !== 200) problems.push(`${page}: ${res.status}`);
                return body;
              };
              const pages = new Map<string, string>();
              for (const row of rows) {
                const query = new URLSearchParams(flow.keys.map((k) => [k, row[k] instanceof JsonNumber ? (row[k] as JsonNumber).raw : String(row[k])]));
                const page = `/key?${query}`;
                if (!pages.has(page)) pages.set(page, await get(page));
                const body = pages.get(page)!;
                for (const text of shownValues(row)) if (!body.includes(text)) problems.push(`${page} does not show ${text}`);
              }
              for (let v = 1; v <= sc.batches.length; v++) await get(`/commits/${v}`);
              await get('/');
              await get('/quarantine');
              expect(problems, describeWide(sc)).toEqual([]);
            } finally {
              await server.close();
              rmSync(dir, { recursive: true, force: true });
            }
          }),
          fcParams<[WideScenario]>(RUNS, engine.name),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  });
}
