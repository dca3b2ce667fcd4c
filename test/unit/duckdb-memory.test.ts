/** DuckDB runs with bounded memory (docs/DECISIONS.md "Memory"): 1GB unless SCD_DUCKDB_MEMORY_LIMIT says otherwise. */
import { afterEach, describe, expect, it } from 'vitest';
import { openDriver, ScdError } from '../../src/index.js';

const setting = async (env: string | undefined) => {
  if (env === undefined) delete process.env.SCD_DUCKDB_MEMORY_LIMIT;
  else process.env.SCD_DUCKDB_MEMORY_LIMIT = env;
  const d = await openDriver(':memory:');
  try {
    return String((await d.query(`SELECT current_setting('memory_limit') AS m`))[0]!.m);
  } finally {
    await d.close();
  }
};

describe('DuckDB memory limit', () => {
  const saved = process.env.SCD_DUCKDB_MEMORY_LIMIT;
  afterEach(() => {
    if (saved === undefined) delete process.env.SCD_DUCKDB_MEMORY_LIMIT;
    else process.env.SCD_DUCKDB_MEMORY_LIMIT = saved;
  });

  it('is 1GB by default (DuckDB prints it in MiB)', async () => {
    expect(await setting(undefined)).toBe('953.6 MiB');
  });

  it('returns freed memory to the system early (allocator flush thresholds 16 MiB / 64 MiB)', async () => {
    delete process.env.SCD_DUCKDB_MEMORY_LIMIT;
    const d = await openDriver(':memory:');
    try {
      const rows = await d.query(`SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_bulk_deallocation_flush_threshold') ORDER BY name`);
      expect(rows.map((r) => String(r.value))).toEqual(['64.0 MiB', '16.0 MiB']);
    } finally {
      await d.close();
    }
  });

  it('follows SCD_DUCKDB_MEMORY_LIMIT', async () => {
    expect(await setting('512MB')).toBe('488.2 MiB');
  });

  it('refuses a value DuckDB does not accept, with the fix', async () => {
    const err = await setting('lots').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScdError);
    expect((err as ScdError).message).toMatch(/^SCD_DUCKDB_MEMORY_LIMIT=lots is not a memory size/);
    expect((err as ScdError).fix).toMatch(/1GB/);
  });
});
