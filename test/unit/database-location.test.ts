/**
 * The library reads a database location as the CLI does: openDriver, a flow's `database`
 * (defineFlow) and a call's `database` option refuse a location that looks like a URL but is no
 * engine's, with an ScdError whose every text shows the credentials as `***`, and open nothing.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defineFlow, openDriver, readTarget, ScdError } from '../../src/index.js';

const SECRET = 'S3cr3t';
const LOCATIONS = [`pg://etl:${SECRET}@db.example.com/sales`, `jdbc:postgresql://db/sales;password=${SECRET}`, ` postgresql://etl:${SECRET}@db/sales`];

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ScdError> {
  const e = await (typeof p === 'function' ? Promise.resolve().then(p) : p).then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ScdError);
  const err = e as ScdError;
  for (const text of [err.message, err.problem, err.fix ?? '', String(err.stack)]) expect(text).not.toContain(SECRET);
  expect(err.message).toContain('***');
  return err;
}

describe('a database location that is no engine URL', () => {
  for (const location of LOCATIONS) {
    it(`openDriver, defineFlow and a call's database option refuse ${location.replace(SECRET, '…')}`, async () => {
      await refusal(openDriver(location));
      const e = await refusal(() => defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'ts', database: location }));
      expect(e.field).toBe('database');
      await refusal(readTarget(defineFlow({ target: 'dim', keys: 'id', sequenceBy: 'ts', database: ':memory:' }), { database: location }));
      expect(existsSync(location)).toBe(false);
    });
  }
});
