/** The in-process mutex per key behind DuckDB's target locks: first come first served, keys independent. */
import { describe, expect, it } from 'vitest';
import { KeyedMutex } from '../../src/dialects/duckdb/keyed-mutex.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('KeyedMutex', () => {
  it('hands a key to one holder at a time, in the order asked; other keys do not wait', async () => {
    const m = new KeyedMutex();
    const order: string[] = [];
    const first = await m.acquire('t');
    const second = m.acquire('t').then((release) => {
      order.push('second');
      return release;
    });
    const third = m.acquire('t').then((release) => {
      order.push('third');
      return release;
    });
    const other = await m.acquire('u'); // not blocked by t
    other();
    await tick();
    expect(order).toEqual([]);
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    // Free again at once.
    (await m.acquire('t'))();
  });

  it('a release twice hands the key on once', async () => {
    const m = new KeyedMutex();
    const a = await m.acquire('t');
    let bHeld = false;
    const b = m.acquire('t').then((r) => {
      bHeld = true;
      return r;
    });
    let cHeld = false;
    const c = m.acquire('t').then((r) => {
      cHeld = true;
      return r;
    });
    a();
    a();
    const releaseB = await b;
    await tick();
    expect([bHeld, cHeld]).toEqual([true, false]);
    releaseB();
    (await c)();
    expect(cHeld).toBe(true);
  });
});
