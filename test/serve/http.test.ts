/**
 * `scd serve` over HTTP, without a browser, on every engine: paging in the server (a table larger
 * than a page sends one page and a link to the next), HTML escaping of hostile values read from
 * the database and given in the URL, parameters bound (never spliced), composite keys with a tuple
 * sequence, and the status of wrong URLs.
 */
import { request as httpRequest } from 'node:http';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRows, type Driver, defineFlow, type RunningServer, sharedDriver, startServer } from '../../src/index.js';
import { hostCheck } from '../../src/serve/host-check.js';
import { engines } from '../engines.js';
import { README_BATCHES } from './readme-pages.js';

const customersInput = {
  target: 'dim_customer',
  keys: ['customer_id'],
  sequenceBy: 'changed_at',
  applyAsDeletes: "op = 'DELETE'",
  exceptColumns: ['op'],
  columnTypes: { changed_at: 'date' },
};
const customers = defineFlow(customersInput);

const HOSTILE = `<script>alert("x")</script><img src=x onerror=alert(1)>'&`;

/** The README example, one batch per commit (readme-pages.ts), plus a hostile name and a record that is quarantined. */
const BATCHES = [
  ...README_BATCHES.slice(0, 3),
  [
    { customer_id: 666, customer_name: HOSTILE, city: HOSTILE, op: 'UPSERT', changed_at: '2025-01-01' },
    { customer_id: null, customer_name: HOSTILE, city: 'x', op: 'UPSERT', changed_at: '2025-01-01' },
  ],
];

/** A composite key and a tuple sequence: (region, account) ordered by [ts, lsn]. */
const accounts = defineFlow({ target: 'dim_account', keys: ['region', 'account'], sequenceBy: ['ts', 'lsn'], columnTypes: { ts: 'bigint', lsn: 'bigint' } });
const ACCOUNT_ROWS = [
  { region: 'eu', account: 7, plan: 'free', ts: 100, lsn: 1 },
  { region: 'eu', account: 7, plan: 'pro', ts: 100, lsn: 2 },
  { region: 'eu', account: 7, plan: 'team', ts: 250, lsn: 1 },
  { region: 'us', account: 7, plan: 'free', ts: 100, lsn: 1 },
];

/** The rows of the first table's body. */
function bodyRows(page: string): number {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(page)?.[1] ?? '';
  return (body.match(/<tr/g) ?? []).length;
}

for (const engine of engines) {
  describe(`${engine.name}: scd serve over HTTP`, () => {
    let driver: Driver;
    let server: RunningServer;
    let accountServer: RunningServer;
    const get = async (path: string, on = server) => {
      const res = await fetch(new URL(path, on.url));
      return { status: res.status, text: await res.text(), headers: res.headers };
    };

    beforeAll(async () => {
      driver = await engine.open();
      for (const b of BATCHES) await applyRows(driver, customers, b);
      await applyRows(driver, accounts, ACCOUNT_ROWS);
      server = await startServer({ flow: customers, source: sharedDriver(driver), pageSize: 2 });
      accountServer = await startServer({ flow: accounts, source: sharedDriver(driver), pageSize: 2 });
    });
    afterAll(async () => {
      await server?.close();
      await accountServer?.close();
      await driver?.close();
    });

    it('pages on the server: a table larger than a page returns one page and a link to the next', async () => {
      // As of 2025-03-10: 501 Pune, 502 Pune, 504 Chennai, 666: four rows, two a page.
      const first = await get('/as-of?t=2025-03-10');
      expect(first.status).toBe(200);
      expect(bodyRows(first.text)).toBe(2);
      expect(first.text).toContain('rel="next" href="/as-of?t=2025-03-10&amp;page=2"');
      expect(first.text).not.toContain('rel="prev" href="/as-of?t=2025-03-10&amp;page=');
      const second = await get('/as-of?t=2025-03-10&page=2');
      expect(bodyRows(second.text)).toBe(2);
      expect(second.text).toContain('Chennai');
      expect(second.text).not.toContain('Bengaluru');
      expect(second.text).not.toContain('page=3');
      expect(second.text).toContain('rel="prev" href="/as-of?t=2025-03-10&amp;page=1"');
      // The commit feed and the key's versions page the same way.
      const feed = await get('/commits/3');
      expect(bodyRows(feed.text)).toBe(2);
      expect(feed.text).toContain('href="/commits/3?page=2"');
      const key = await get('/key?customer_id=501');
      expect((key.text.match(/class="version/g) ?? []).length).toBe(2);
      expect(key.text).toContain('href="/key?customer_id=501&amp;page=2"');
      // Both versions on page 1 are closed, but later ones follow on page 2: no deletion drawn.
      expect(key.text).not.toContain('class="gap"');
      expect(key.text).not.toContain('Hatched');
      const rest = await get('/key?customer_id=501&page=2');
      expect((rest.text.match(/class="version/g) ?? []).length).toBe(1);
      expect(rest.text).toContain('Pune');
    });

    it('escapes every value read from the database and every parameter given in the URL', async () => {
      const pages = [
        await get('/'),
        await get('/key?customer_id=666'),
        await get('/as-of?t=2025-02-01&page=2'),
        await get('/commits/4'),
        await get('/quarantine'),
        await get(`/quarantine?reason=${encodeURIComponent(HOSTILE)}`),
        await get(`/key?customer_id=${encodeURIComponent(HOSTILE)}`),
        await get(`/as-of?t=${encodeURIComponent(HOSTILE)}`),
        await get(`/${encodeURIComponent(HOSTILE)}`),
      ];
      const shows = [false, true, true, true, true, true, true, true, false];
      pages.forEach((p, i) => {
        expect(p.text, `page ${i}`).not.toMatch(/<script|<img|onerror=alert\(1\)>/i);
        // The quarantined record's raw text is JSON: its quotes are written \" there.
        if (i === 4) expect(p.text).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
        else if (shows[i]) expect(p.text, `page ${i}`).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&#39;&amp;');
      });
      expect(pages[1]!.status).toBe(200);
      expect(pages[4]!.text).toContain('customer_name'); // the quarantined record's raw text
      // Not a value of the key's type (bigint): refused before any read.
      expect(pages[6]!.status).toBe(400);
      expect(pages[7]!.status).toBe(400);
      expect(pages[8]!.status).toBe(404);
      // Pages run no script at all.
      expect(pages[0]!.headers.get('content-security-policy')).toContain("default-src 'none'");
    });

    it('binds what a person types as parameters: SQL in a key or a filter finds nothing and breaks nothing', async () => {
      const injected = await get(`/key?customer_id=${encodeURIComponent("501' OR '1'='1")}`);
      expect(injected.status).toBe(400);
      expect(injected.text).toContain('501&#39; OR &#39;1&#39;=&#39;1');
      expect(injected.text).toMatch(/customer_id/);
      const filter = await get(`/quarantine?reason=${encodeURIComponent("') OR 1=1 --")}`);
      expect(filter.status).toBe(200);
      expect(bodyRows(filter.text)).toBe(0);
      expect((await get('/key?customer_id=501')).text).toContain('Rahul Mehta');
    });

    it('finds keys by the start of their text, and answers wrong URLs with their status', async () => {
      // No key 50: the page says so (404, the URL names no key) and lists the keys starting with 50.
      const found = await get('/key?customer_id=50');
      expect(found.status).toBe(404);
      expect(found.text).toContain('href="/key?customer_id=501"');
      expect(found.text).toContain('href="/key?customer_id=502"');
      expect(found.text).toContain('/key?customer_id=50&amp;page=2'); // 501, 502 | 504
      expect((await get('/commits/99')).status).toBe(404);
      expect((await get('/nowhere')).status).toBe(404);
      expect((await fetch(new URL('/', server.url), { method: 'POST' })).status).toBe(405);
    });

    it('a composite key with a tuple sequence: its versions on the timeline, placed by the first part', async () => {
      const page = await get('/key?region=eu&account=7', accountServer);
      expect(page.status).toBe(200);
      // [100,1] free and [100,2] pro are two versions; [250,1] team is the current one.
      expect((page.text.match(/class="version/g) ?? []).length).toBe(2);
      expect(page.text).toContain('free');
      expect(page.text).toContain('pro');
      const next = await get('/key?region=eu&account=7&page=2', accountServer);
      expect(next.text).toMatch(/class="version open"/);
      expect(next.text).toContain('team');
      const missingPart = await get('/key?region=eu', accountServer);
      expect(missingPart.text).toContain('href="/key?region=eu&amp;account=7"');
      expect(missingPart.text).not.toContain('region=us');
      const asOf = await get('/as-of?t=200', accountServer);
      expect(asOf.status).toBe(200);
      expect(asOf.text).toContain('pro');
      expect(asOf.text).not.toContain('team');
    });

    it('scd1, tombstones and an end sentinel: the key page draws what each stores', async () => {
      const variants = {
        scd1: defineFlow({ ...customersInput, target: 'dim_customer_1', storedAs: 'scd1' }),
        tomb: defineFlow({ ...customersInput, target: 'dim_customer_t', deletes: 'tombstone' }),
        sentinel: defineFlow({ ...customersInput, target: 'dim_customer_s', endSentinel: '9999-12-31', startAtColumn: 'valid_from', endAtColumn: 'valid_to' }),
      };
      for (const f of Object.values(variants)) for (const b of BATCHES.slice(0, 3)) await applyRows(driver, f, b);
      const servers = Object.fromEntries(
        await Promise.all(Object.entries(variants).map(async ([name, f]) => [name, await startServer({ flow: f, source: sharedDriver(driver) })] as const)),
      );
      try {
        // scd1 keeps one row a key: no timeline, and no history to go back in.
        const one = await get('/key?customer_id=501', servers.scd1);
        expect(one.status).toBe(200);
        expect(one.text).toContain('Pune');
        expect(one.text).not.toContain('class="timeline"');
        expect((await get('/as-of?t=2024-09-01', servers.scd1)).status).toBe(400);
        expect((await get('/', servers.scd1)).status).toBe(200);
        // A tombstone is a version of its own, drawn as deleted and open-ended.
        const tomb = await get('/key?customer_id=502', servers.tomb);
        expect(tomb.text).toContain('class="version"');
        expect(tomb.text).toContain('class="version open deleted"');
        // With an end sentinel the current version is still open-ended; the closed ones are not.
        const sentinel = await get('/key?customer_id=501', servers.sentinel);
        expect((sentinel.text.match(/class="version open"/g) ?? []).length).toBe(1);
        expect((sentinel.text.match(/class="version"/g) ?? []).length).toBe(2);
        expect(sentinel.text).toContain('9999-12-31');
      } finally {
        for (const s of Object.values(servers)) await s.close();
      }
    });
  });
}

/** A GET with the Host header given (fetch sends the URL's own). */
function getWithHost(url: string, host: string | undefined): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const headers: Record<string, string> = host === undefined ? {} : { host };
    const req = httpRequest({ hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers, setHost: false }, (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

for (const engine of engines) {
  describe(`${engine.name}: scd serve refuses what it cannot answer, in one line`, () => {
    let driver: Driver;
    let server: RunningServer;
    const get = async (path: string) => {
      const res = await fetch(new URL(path, server.url));
      return { status: res.status, text: await res.text() };
    };
    /** The page's error line, tags removed. */
    const errorOf = (page: string) => (/<p class="error">([\s\S]*?)<\/p>/.exec(page)?.[1] ?? '').replace(/<[^>]*>/g, '');

    beforeAll(async () => {
      driver = await engine.open();
      for (const b of BATCHES) await applyRows(driver, customers, b);
      server = await startServer({ flow: customers, source: sharedDriver(driver), pageSize: 2 });
    });
    afterAll(async () => {
      await server?.close();
      await driver?.close();
    });

    it('answers only requests for the host names it was bound to (no DNS rebinding)', async () => {
      const port = new URL(server.url).port;
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, 'localhost']) {
        const ok = await getWithHost(new URL('/key?customer_id=501', server.url).href, host);
        expect(ok.status, host).toBe(200);
        expect(ok.text).toContain('Rahul Mehta');
      }
      for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `localhost.evil.example`, `10.0.0.5:${port}`, '']) {
        const refused = await getWithHost(new URL('/key?customer_id=501', server.url).href, host);
        expect(refused.status, host).toBe(421);
        expect(refused.text).not.toContain('Rahul Mehta');
        expect(refused.text.trim().split('\n')).toHaveLength(1);
        expect(refused.text).toContain('scd serve answers to 127.0.0.1, localhost, [::1]');
        expect(refused.text).toContain('fix:');
      }
    });

    it('a commit filter beyond 32 bits, not a number, or of no commit: 404 or 400 with the commits there are', async () => {
      for (const commit of ['2147483648', '9223372036854775808', '99999999999999999999999', '5', '0']) {
        const page = await get(`/quarantine?commit=${commit}`);
        expect(page.status, commit).toBe(404);
        expect(errorOf(page.text)).toBe(`dim_customer has no commit ${commit}: its commits are 1 to 4 (fix: give one of them, or leave commit empty for every commit)`);
      }
      const word = await get('/quarantine?commit=abc');
      expect(word.status).toBe(400);
      expect(errorOf(word.text)).toContain('commit abc is not a commit number');
      const four = await get('/quarantine?commit=4');
      expect(four.status).toBe(200);
      expect(four.text).toContain('<pre class="raw">');
    });

    it('a NUL in a parameter is 400 and says so, on every page', async () => {
      for (const path of ['/key?customer_id=50%001', '/quarantine?reason=a%00b', '/as-of?t=2025%00', '/commits/1?page=%00', '/?x%00=1']) {
        const page = await get(path);
        expect(page.status, path).toBe(400);
        expect(errorOf(page.text), path).toContain('holds a NUL character (%00)');
        expect(page.text).not.toContain('a bug in scdkit');
      }
    });

    it("a page beyond the key's last says so, with links to its first and last pages", async () => {
      // 501 has three versions, two a page.
      for (const n of [3, 2000000]) {
        const page = await get(`/key?customer_id=501&page=${n}`);
        expect(page.status).toBe(404);
        expect(errorOf(page.text)).toBe(`Page ${n} is beyond the last page of customer_id = 501: 3 versions, 2 a page, so pages 1 to 2.`);
        expect(page.text).toContain('href="/key?customer_id=501&amp;page=2"');
        expect(page.text).not.toContain('has no version');
      }
      expect((await get('/key?customer_id=501&page=2')).status).toBe(200);
      // A key that has no version at all is still said so.
      expect(errorOf((await get('/key?customer_id=777&page=2')).text)).toBe('dim_customer has no version of customer_id = 777.');
    });
  });
}

describe('which Host headers a server answers, by what it was bound to', () => {
  it('loopback, an address, a name, every address', () => {
    const loop = hostCheck('127.0.0.1');
    expect(['127.0.0.1:80', 'localhost', '[::1]:8321', 'Localhost.'].map((h) => loop.allows(h))).toEqual([true, true, true, true]);
    expect(['evil.example', '192.168.1.9', undefined, ''].map((h) => loop.allows(h))).toEqual([false, false, false, false]);
    const v6 = hostCheck('::1');
    expect([v6.allows('[::1]:1'), v6.allows('localhost'), v6.allows('evil.example')]).toEqual([true, true, false]);
    const address = hostCheck('192.168.1.9');
    expect([address.allows('192.168.1.9:8321'), address.allows('localhost'), address.allows('evil.example')]).toEqual([true, false, false]);
    const name = hostCheck('scd.internal');
    expect([name.allows('SCD.internal:8321'), name.allows('evil.example')]).toEqual([true, false]);
    const every = hostCheck('0.0.0.0');
    expect(['10.1.2.3:8321', '[fe80::1]:8321', 'localhost', hostname()].map((h) => every.allows(h))).toEqual([true, true, true, true]);
    expect(every.allows('evil.example')).toBe(false);
  });
});
