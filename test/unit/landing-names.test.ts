/** A landing file's name inside its source (sources/landing.ts nameInSource): what its record keeps. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nameInSource } from '../../src/sources/landing.js';

describe('nameInSource', () => {
  it('a local folder: the path inside it, `/`-separated; a path outside it has none', () => {
    const dir = path.resolve('/data/landing');
    expect(nameInSource(dir, path.join(dir, '2025-01-01.ndjson'))).toBe('2025-01-01.ndjson');
    expect(nameInSource(dir, path.join(dir, 'sub', 'a.csv'))).toBe('sub/a.csv');
    expect(nameInSource(dir, path.resolve('/data/elsewhere/a.csv'))).toBeUndefined();
    expect(nameInSource(dir, path.resolve('/data/landing-old/a.csv'))).toBeUndefined();
  });
  it('a single-file source: its base name', () => {
    expect(nameInSource(path.resolve('/data/changes.csv'), path.resolve('/data/changes.csv'))).toBe('changes.csv');
  });
  it('an object-store folder: the URL after the folder, with or without its trailing slash', () => {
    expect(nameInSource('s3://bucket/landing/', 's3://bucket/landing/part-0001.ndjson')).toBe('part-0001.ndjson');
    expect(nameInSource('file:///tmp/in', 'file:///tmp/in/a.ndjson')).toBe('a.ndjson');
    expect(nameInSource('s3://bucket/landing/', 's3://bucket/other/a.ndjson')).toBeUndefined();
    expect(nameInSource('s3://bucket/one.ndjson', 's3://bucket/one.ndjson')).toBe('one.ndjson');
  });
});
