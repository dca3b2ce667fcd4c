/**
 * Every page of `scd serve` as a person sees it, at 1280×800 and 800×600, in Debian's Chromium
 * (playwright-core), on every engine: nothing overflows the page sideways (the document is no
 * wider than the window), every chart lies inside the window and every text of a chart inside its
 * chart. The data is what change data holds: zoned timestamps in mixed styles, exact decimals,
 * integers beyond 2^53, unicode, nulls, long unbroken values and long file names, a key with 80
 * versions and a deleted key. Screenshots go to test-artifacts/serve-layout/ (git-ignored).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyFiles, type Driver, defineFlow, type RunningServer, sharedDriver, startServer } from '../../src/index.js';
import { ROOT } from '../e2e/fixtures/cli.js';
import { engines } from '../engines.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'serve-layout');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 800, height: 600 },
];

export const accounts = defineFlow({
  target: 'dim_account',
  keys: ['account_id'],
  sequenceBy: 'changed_at',
  applyAsDeletes: "op = 'DELETE'",
  exceptColumns: ['op'],
  columnTypes: { changed_at: 'timestamp', balance: 'decimal(20,2)', ref: 'bigint' },
});

const LONG_TOKEN = `https://example.com/accounts/${'a1b2c3d4'.repeat(14)}`;
const NAME = 'Zoë Ångström-Łukasiewicz 東京支店 🏦';

/** Ten files with long names: key 42 changes 8 times in each (80 versions); key 7 is deleted in the last. */
function batches(): Array<{ name: string; rows: Array<Record<string, unknown>> }> {
  const out: Array<{ name: string; rows: Array<Record<string, unknown>> }> = [];
  for (let b = 0; b < 10; b++) {
    const rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 8; i++) {
      const n = b * 8 + i;
      const day = String(1 + (n % 28)).padStart(2, '0');
      const month = String(1 + Math.floor(n / 28)).padStart(2, '0');
      // Mixed styles of zoned timestamps, one instant per version.
      const changed_at = n % 2 ? `2025-${month}-${day}T05:30:00+05:30` : `2025-${month}-${day}T00:00:00Z`;
      rows.push({
        account_id: 42,
        name: `${NAME} v${n}`,
        balance: `${9007199254740993n + BigInt(n)}.25`,
        ref: '9223372036854775807',
        note: n % 3 ? LONG_TOKEN : null,
        op: 'UPSERT',
        changed_at,
      });
    }
    if (b === 0) rows.push({ account_id: 7, name: 'Ôlga', balance: '0.10', ref: '-9223372036854775808', note: '', op: 'UPSERT', changed_at: '2024-12-31T23:00:00-01:00' });
    if (b === 9) rows.push({ account_id: 7, op: 'DELETE', changed_at: '2025-04-01T00:00:00Z' });
    // A record that does not fit (the balance), quarantined with its long raw text.
    if (b === 4) rows.push({ account_id: 9, name: LONG_TOKEN, balance: 'not-a-number', ref: 1, note: LONG_TOKEN.repeat(3), op: 'UPSERT', changed_at: '2025-02-01T00:00:00Z' });
    out.push({ name: `2025-01-${String(b + 1).padStart(2, '0')}_accounts_export_from_the_core_banking_system_batch_${String(b + 1).padStart(4, '0')}.ndjson`, rows });
  }
  return out;
}

/** What overflows on the current page: the document sideways, a chart out of the window, a chart's text out of its chart. */
function overflowProblems(): string[] {
  const problems: string[] = [];
  const width = window.innerWidth;
  const doc = document.documentElement;
  if (doc.scrollWidth > width) problems.push(`the document is ${doc.scrollWidth} px wide in a ${width} px window`);
  for (const svg of Array.from(document.querySelectorAll('svg'))) {
    const box = svg.getBoundingClientRect();
    const name = svg.getAttribute('class') ?? 'svg';
    if (box.left < 0 || box.right > width + 0.5) problems.push(`${name} spans ${Math.round(box.left)}..${Math.round(box.right)} in a ${width} px window`);
    for (const t of Array.from(svg.querySelectorAll('text'))) {
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
        problems.push(
          `${name}: "${t.textContent}" at ${Math.round(r.left)}..${Math.round(r.right)} × ${Math.round(r.top)}..${Math.round(r.bottom)} is outside ${Math.round(box.left)}..${Math.round(box.right)} × ${Math.round(box.top)}..${Math.round(box.bottom)}`,
        );
    }
  }
  return problems;
}

for (const engine of engines) {
  describe(`${engine.name}: every page of scd serve fits the window`, () => {
    let driver: Driver;
    let server: RunningServer;
    let browser: Browser;
    const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-serve-layout-'));

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      driver = await engine.open();
      for (const b of batches()) {
        const file = path.join(dir, b.name);
        writeFileSync(file, b.rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
        await applyFiles(driver, accounts, [{ path: file, format: 'ndjson' }]);
      }
      server = await startServer({ flow: accounts, source: sharedDriver(driver) });
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    }, 120_000);
    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await driver?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const pages = [
      ['overview', '/'],
      ['key-80-versions', '/key?account_id=42'],
      ['key-deleted', '/key?account_id=7'],
      ['find-key', '/key'],
      ['commit-1', '/commits/1'],
      ['commit-10', '/commits/10'],
      ['quarantine', '/quarantine'],
      ['as-of-latest', '/as-of'],
      ['as-of-time', '/as-of?t=2025-01-05T00:00:00Z'],
    ] as const;

    for (const size of SIZES) {
      it(`at ${size.width}×${size.height}: no page is wider than the window, no chart or label is cut`, async () => {
        const page = await browser.newPage({ viewport: size });
        try {
          const problems: string[] = [];
          for (const [name, p] of pages) {
            const res = await page.goto(new URL(p, server.url).href);
            expect(res?.status(), p).toBe(200);
            const shot = path.join(ARTIFACTS, `${engine.name}-${size.width}x${size.height}-${name}`);
            await page.screenshot({ path: `${shot}.png`, fullPage: true });
            await page.screenshot({ path: `${shot}-window.png` });
            // And the window at the page's first table, as a person scrolls to it.
            const table = page.locator('main table').first();
            if (await table.count()) {
              await table.evaluate((t) => t.scrollIntoView());
              await page.screenshot({ path: `${shot}-table.png` });
            }
            problems.push(...(await page.evaluate(overflowProblems)).map((m) => `${p}: ${m}`));
            if (name === 'key-80-versions') {
              // The 80 versions share a chart of bounded height that spans most of the window.
              const box = (await page.locator('svg.timeline').boundingBox())!;
              expect(box.height, 'timeline height').toBeLessThanOrEqual(560);
              expect(box.width, 'timeline width').toBeGreaterThanOrEqual(0.65 * size.width);
              expect(await page.locator('svg.timeline rect.version').count()).toBe(80);
            }
            if (name === 'key-deleted') {
              // Its one version was closed by the delete of the last commit.
              expect(await page.locator('main table tbody tr td:last-child').textContent()).toBe('commit 10');
            }
          }
          expect(problems).toEqual([]);
        } finally {
          await page.close();
        }
      }, 120_000);
    }
  });
}
