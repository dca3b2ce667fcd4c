/**
 * `scd serve` end to end: the built CLI serves the README example (applied one file per commit,
 * as `npm start` does) from its DuckDB file, and Debian's Chromium, driven headless by
 * playwright-core, opens every page: none logs a console error; the key page shows 501's three
 * cities with their dates and draws three bars; a commit applied by `scd apply` in another process
 * while the server runs appears on reload. Screenshots go to test-artifacts/serve/ (git-ignored).
 * One browser for the file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, SCD, scdOk, tempDir } from '../e2e/fixtures/cli.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = path.join(ROOT, 'test-artifacts', 'serve');

/** Start `scd serve` on a free port in `cwd`; resolves with its URL once it prints it. */
function serve(cwd: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [SCD, 'serve', 'flow.yaml', '--port', '0'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`scd serve printed no URL:\n${out}`)), 20_000);
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /serving \S+ at (http:\/\/\S+)/.exec(out)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, url, output: () => out });
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.on('exit', (code) => reject(new Error(`scd serve exited ${code}:\n${out}`)));
  });
}

describe('scd serve in Chromium', () => {
  const tmp = tempDir('scdkit-serve-');
  const project = path.join(tmp.dir, 'customers');
  let browser: Browser;
  let page: Page;
  let server: Awaited<ReturnType<typeof serve>>;
  const consoleErrors: string[] = [];

  /** Open a path; it must answer 200 and log no console error. */
  async function open(p: string, shot?: string): Promise<void> {
    const before = consoleErrors.length;
    const res = await page.goto(new URL(p, server.url).href);
    expect(res?.status(), p).toBe(200);
    expect(consoleErrors.slice(before), `console errors on ${p}`).toEqual([]);
    if (shot) await page.screenshot({ path: path.join(ARTIFACTS, `${shot}.png`), fullPage: true });
  }

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
    mkdirSync(ARTIFACTS, { recursive: true });
    // The example as committed: not a database `npm start` may have left beside it.
    cpSync(path.join(ROOT, 'examples', 'customers'), project, { recursive: true, filter: (src) => !/\.(duckdb|wal)$/.test(src) });
    await scdOk(['apply', 'flow.yaml', '--each'], project);
    server = await serve(project);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    page.on('pageerror', (e) => consoleErrors.push(String(e)));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    server?.child.kill('SIGTERM');
    tmp.cleanup();
  });

  it('the overview shows the target, its counts, the commits and the chart', async () => {
    await open('/', 'overview');
    expect(await page.textContent('#rows')).toBe('5');
    expect(await page.textContent('#current-rows')).toBe('2');
    expect(await page.textContent('#keys')).toBe('3');
    expect(await page.locator('table.commits tbody tr').count()).toBe(3);
    expect(await page.locator('table.commits').textContent()).toContain('3 = 2 + 1 + 0'); // commit 3: a duplicate
    expect(await page.locator('svg.commit-chart .commit-bar').count()).toBe(3);
  });

  it("the key page shows 501's three cities with their dates and draws the timeline", async () => {
    await open('/key?customer_id=501', 'key-501');
    const versions = page.locator('table tbody tr');
    expect(await versions.count()).toBe(3);
    const rows = await versions.allTextContents();
    expect(rows[0]).toMatch(/Bengaluru.*2024-01-01.*2024-08-01/);
    expect(rows[1]).toMatch(/Mysuru.*2024-08-01.*2025-03-10/);
    expect(rows[2]).toMatch(/Pune.*2025-03-10/);
    // What changed from the previous version is marked.
    expect(await page.locator('tbody tr:nth-child(2) td.changed').allTextContents()).toContain('Mysuru');
    // The commit that made each version: Mysuru came late, in commit 3.
    expect(rows[1]).toContain('commit 3');
    const bars = page.locator('svg.timeline rect.version');
    expect(await bars.count()).toBe(3);
    expect(await page.locator('svg.timeline rect.version.open').count()).toBe(1);
    // Bars run left to right in sequence order, each with a width.
    const boxes = await Promise.all((await bars.all()).map((b) => b.boundingBox()));
    for (const b of boxes) expect(b!.width).toBeGreaterThan(0);
    expect(boxes[0]!.x).toBeLessThan(boxes[1]!.x);
    expect(boxes[1]!.x).toBeLessThan(boxes[2]!.x);
    // The search box finds a key.
    await page.fill('header input[name="customer_id"]', '504');
    await page.press('header input[name="customer_id"]', 'Enter');
    await page.waitForURL(/\/key\?customer_id=504$/);
    expect(await page.textContent('main')).toContain('Chennai');
    // 502 was deleted: its one version is closed, and a gap follows it.
    await open('/key?customer_id=502', 'key-502');
    expect(await page.locator('svg.timeline rect.gap').count()).toBe(1);
    expect((await page.locator('svg.timeline rect.gap').boundingBox())!.width).toBeGreaterThan(20);
  });

  it('a commit page shows its counts, inputs and change feed', async () => {
    await open('/commits/3', 'commit-3');
    const text = (await page.textContent('main'))!;
    expect(text).toContain('003_late_event_and_delete.ndjson');
    expect(await page.textContent('#rows-read')).toBe('3 = 2 + 1 + 0');
    expect(await page.locator('tr.update_preimage').count()).toBe(2);
    expect(await page.locator('tr.update_postimage').count()).toBe(2);
    expect(await page.locator('tr.insert').count()).toBe(1);
  });

  it('the as-of page shows the table at a time and moves it to the next change', async () => {
    await open('/as-of?t=2024-09-01', 'as-of');
    expect(await page.textContent('main')).toContain('Mysuru');
    expect(await page.textContent('main')).not.toContain('Bengaluru');
    await page.click('a.move[rel="next"]');
    await page.waitForURL(/t=2025-03-10/);
    const text = (await page.textContent('main'))!;
    expect(text).toContain('Chennai');
    expect(text).not.toContain('Mysuru');
    expect(consoleErrors).toEqual([]);
  });

  it('a commit applied by another process while serving appears on reload, with its quarantined record', async () => {
    await open('/quarantine');
    expect(await page.textContent('main')).toContain('No quarantined record');
    await open('/');
    writeFileSync(
      path.join(project, 'changes', '004_priya_moves.ndjson'),
      '{"customer_id": 504, "customer_name": "Priya Nair", "city": "Kochi", "op": "UPSERT", "changed_at": "2025-09-01"}\n{"customer_id": 505, "customer_name": "Broken\n',
    );
    const applied = await scdOk(['apply', 'flow.yaml'], project);
    expect(applied.stdout).toContain('commit 4');
    await page.reload();
    expect(await page.locator('a[href="/commits/4"]').count()).toBeGreaterThan(0);
    expect(await page.textContent('#rows')).toBe('6');
    expect(await page.textContent('#quarantined')).toBe('1');
    await page.screenshot({ path: path.join(ARTIFACTS, 'overview-after-commit-4.png'), fullPage: true });

    await open('/quarantine', 'quarantine');
    const row = (await page.textContent('table.quarantine tbody tr'))!;
    expect(row).toContain('004_priya_moves.ndjson:2');
    expect(row).toContain('"customer_name": "Broken');
    // Filters: by commit, and by reason.
    await page.fill('input[name="commit"]', '4');
    await page.click('form.filters button');
    await page.waitForURL(/commit=4/);
    expect(await page.locator('table.quarantine tbody tr').count()).toBe(1);
    await open('/quarantine?reason=no-such-reason');
    expect(await page.locator('table.quarantine tbody tr').count()).toBe(0);

    await open('/key?customer_id=504');
    expect(await page.locator('svg.timeline rect.version').count()).toBe(2);
    expect(await page.textContent('main')).toContain('Kochi');
    expect(server.output()).not.toMatch(/error/i);
  });
});
