/** DuckDB runs with bounded memory (docs/decisions/0054-duckdbs-memory-is-bounded.md): 1GB unless SCD_DUCKDB_MEMORY_LIMIT says otherwise. */
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
      const rows = await d.query(
        `SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_bulk_deallocation_flush_threshold') ORDER BY name`,
      );
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
    expect((err as ScdError).problem).toMatch(/^SCD_DUCKDB_MEMORY_LIMIT=lots is not a memory size/);
    expect((err as ScdError).fix).toMatch(/1GB/);
  });
});

describe('DuckDB temporary tables dropped inside a commit', () => {
  const used = async (d: Awaited<ReturnType<typeof openDriver>>) => Number((await d.query(`SELECT CAST(sum(memory_usage_bytes) AS BIGINT) AS b FROM duckdb_memory()`))[0]!.b);
  const wide = (t: string) => `CREATE TEMP TABLE ${t} AS SELECT range AS id, repeat('x', 60) || range AS wide FROM range(1000000)`;

  it('give their memory back before the COMMIT (a plain DROP TABLE keeps it until then)', async () => {
    const d = await openDriver(':memory:');
    try {
      await d.transaction(async () => {
        await d.run(wide('a'));
        const withA = await used(d);
        await d.run('DROP TABLE a');
        // DuckDB's own behaviour, which dropTemporary works around.
        expect(await used(d)).toBeGreaterThanOrEqual(withA);
        await d.run(wide('b'));
        const withB = await used(d);
        await d.dropTemporary(['b']);
        expect(await used(d)).toBeLessThan(withB - 40_000_000);
        expect(await d.columns('b')).toBeUndefined();
      });
    } finally {
      await d.close();
    }
  });

  it('drop a table made before the commit and changed inside it (a snapshot stage) without a conflict', async () => {
    const d = await openDriver(':memory:');
    try {
      await d.run(`CREATE TEMP TABLE s AS SELECT range AS id, 'v' || range AS v FROM range(10)`);
      await d.transaction(async () => {
        await d.run(`INSERT INTO s VALUES (99, 'late')`);
        await d.run(`DELETE FROM s WHERE id < 3`);
        await d.dropTemporary(['s', 'missing'], [], { madeBefore: true });
      });
      expect(await d.columns('s')).toBeUndefined();
    } finally {
      await d.close();
    }
  });
});
