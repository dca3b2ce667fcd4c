/**
 * The README example served, page by page, with the same assertions on every engine (DuckDB and
 * PGlite in readme-pages.test.ts, Spark in spark-serve.suite.ts): each page answers 200 without an
 * error, and 501's key page names the commit that made each of its versions and the one that set
 * its end, read from the change feed the engine keeps.
 */
import { expect } from 'vitest';
import { applyRows, type Driver, defineFlow, sharedDriver, startServer } from '../../src/index.js';

/** examples/customers/flow.yaml, without its database and source. */
export const readmeFlow = defineFlow({
  name: 'customers',
  target: 'dim_customer',
  keys: ['customer_id'],
  sequenceBy: 'changed_at',
  applyAsDeletes: "op = 'DELETE'",
  exceptColumns: ['op'],
});

/** examples/customers/changes/*.ndjson, one batch per commit; then a record without a key, quarantined. */
export const README_BATCHES = [
  [
    { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Bengaluru', op: 'UPSERT', changed_at: '2024-01-01' },
    { customer_id: 502, customer_name: 'Anita Sharma', city: 'Pune', op: 'UPSERT', changed_at: '2023-06-15' },
  ],
  [
    { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Pune', op: 'UPSERT', changed_at: '2025-03-10' },
    { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai', op: 'UPSERT', changed_at: '2025-03-10' },
  ],
  [
    { customer_id: 501, customer_name: 'Rahul Mehta', city: 'Mysuru', op: 'UPSERT', changed_at: '2024-08-01' },
    { customer_id: 504, customer_name: 'Priya Nair', city: 'Chennai', op: 'UPSERT', changed_at: '2025-03-10' },
    { customer_id: 502, op: 'DELETE', changed_at: '2025-06-30' },
  ],
  [{ customer_id: null, customer_name: 'Nobody', city: 'Nowhere', op: 'UPSERT', changed_at: '2025-01-01' }],
];

export async function applyReadmeBatches(driver: Driver): Promise<void> {
  for (const b of README_BATCHES) await applyRows(driver, readmeFlow, b);
}

/** The versions table of a key page: per row, its cells by column header (tags removed). */
export function versionCells(page: string): Array<Record<string, string>> {
  const table = page.slice(page.indexOf('<h2>Versions</h2>'));
  const headers = [...(/<thead>([\s\S]*?)<\/thead>/.exec(table)?.[1] ?? '').matchAll(/<th>([\s\S]*?)<\/th>/g)].map((m) => m[1]!);
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) => {
    const cells = [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]*>/g, '').trim());
    return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? '']));
  });
}

/**
 * Serves the README example (applied by applyReadmeBatches) from `driver` and checks every page.
 * 501: Bengaluru from 2024-01-01 (commit 1; its end set to 2024-08-01 by commit 3, the late
 * Mysuru), Mysuru from 2024-08-01 (commit 3), Pune from 2025-03-10 (commit 2, current).
 */
export async function checkReadmePages(driver: Driver): Promise<void> {
  const server = await startServer({ flow: readmeFlow, source: sharedDriver(driver) });
  try {
    const get = async (path: string) => {
      const res = await fetch(new URL(path, server.url));
      const text = await res.text();
      expect(res.status, `${path}: ${text.slice(0, 2000)}`).toBe(200);
      expect(text, path).not.toContain('class="error"');
      expect(text, path).not.toContain('unexpected error');
      return text;
    };
    expect(await get('/')).toContain('dim_customer');

    const key = await get('/key?customer_id=501');
    const versions = versionCells(key);
    expect(versions.map((v) => [v.city, v['made by'], v['end set by']])).toEqual([
      ['Bengaluru', 'commit 1', 'commit 3'],
      // Mysuru arrived closed (Pune, later, was already there): the commit that wrote it set its end.
      ['Mysuru', 'commit 3', 'commit 3 (written with its end)'],
      ['Pune', 'commit 2', 'open: no end yet'],
    ]);
    // 501 was never deleted: no gap on its timeline, and no word of one.
    expect(key).not.toContain('class="gap"');
    expect(key).not.toContain('Hatched');
    // 502 was deleted on 2025-06-30 (commit 3): a gap after its last version.
    const deleted = await get('/key?customer_id=502');
    expect(versionCells(deleted).map((v) => [v.city, v['made by'], v['end set by']])).toEqual([['Pune', 'commit 1', 'commit 3']]);
    expect(deleted).toContain('class="gap"');
    expect(deleted).toContain('Hatched: where the key was deleted.');

    for (const n of [1, 2, 3]) expect(await get(`/commits/${n}`)).toContain(`Commit ${n}`);
    expect(await get('/commits/1')).toContain('Bengaluru');

    const all = await get('/quarantine');
    expect(all).toContain('Nobody');
    const reason = /<td>([^<]*)<\/td><td><pre class="raw">/.exec(all)?.[1] ?? '';
    expect(reason).not.toBe('');
    const word = reason.split(/\s+/).find((w) => w.length > 3) ?? reason;
    expect(await get(`/quarantine?reason=${encodeURIComponent(word)}`)).toContain('Nobody');
    expect(await get(`/quarantine?reason=${encodeURIComponent('no such reason')}`)).not.toContain('Nobody');

    // Without a time: the table as it is now. 502 (Anita Sharma) was deleted on 2025-06-30, after
    // the last version started (2025-03-10): she is not shown as live.
    const now = await get('/as-of');
    expect(now).toContain('2025-06-30');
    expect(now).toContain('Chennai');
    expect(now).not.toContain('Anita Sharma');
    expect(now).not.toContain('Mysuru');

    const asOf = await get('/as-of?t=2024-09-01');
    expect(asOf).toContain('Mysuru');
    expect(asOf).not.toContain('Bengaluru');
  } finally {
    await server.close();
  }
}
