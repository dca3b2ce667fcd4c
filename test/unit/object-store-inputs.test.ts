/**
 * Object-store URLs as inputs (`s3://…`, `abfss://…`, `file://…`): kept as written for the engine
 * to read, never opened by scd; refused, before anything is read or written, where the engine does
 * not read them itself (DuckDB, PostgreSQL), for Debezium envelopes (scd unwraps those itself) and
 * for a folder URL as --input (scd cannot list one). Spark reading them, and landing folders at
 * URLs listed and hashed by Spark: test/spark/spark-sources.suite.ts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sparkDialect } from '../../src/dialects/spark/spark-dialect.js';
import { isObjectStoreUrl } from '../../src/files/object-store.js';
import { applyFiles, applySourceWith, type Driver, defineFlow, flowStatus, openDriver, resolveInputs, ScdError } from '../../src/index.js';
import { checkInputsReadable } from '../../src/sources/files.js';
import { tempDir } from '../helpers.js';

const flow = defineFlow({ target: 'people', keys: 'id', sequenceBy: 'ts' });

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a refusal');
};

describe('object-store URLs as inputs', () => {
  it('an URL is one file, as written, its format from its extension (or the flow); scd opens nothing', () => {
    expect(resolveInputs(['s3://bucket/day=1/changes.ndjson', 'abfss://raw@acct.dfs.core.windows.net/x/changes.CSV', 'file:///nowhere/at/all.parquet'])).toEqual([
      { path: 's3://bucket/day=1/changes.ndjson', format: 'ndjson' },
      { path: 'abfss://raw@acct.dfs.core.windows.net/x/changes.CSV', format: 'csv' },
      { path: 'file:///nowhere/at/all.parquet', format: 'parquet' },
    ]);
    expect(resolveInputs(['gs://bucket/export'], 'json')).toEqual([{ path: 'gs://bucket/export', format: 'json' }]);
  });

  it('a folder URL, or one whose format cannot be told, is refused in one line with a fix', () => {
    const folder = refusal(() => resolveInputs(['s3://bucket/landing/']));
    expect(folder).toBeInstanceOf(ScdError);
    expect(folder).toMatchObject({ code: 'INPUT_UNREADABLE', problem: 'input s3://bucket/landing/ names a folder of an object store, which scd cannot list' });
    expect((folder as ScdError).fix).toMatch(/one by one/);
    expect(refusal(() => resolveInputs(['s3://bucket/changes.txt']))).toMatchObject({ code: 'INPUT_UNREADABLE', message: expect.stringMatching(/cannot tell the format/) });
  });

  it('what counts as one: a scheme and ://, not a local path or a Windows drive', () => {
    expect(['s3://b/k', 's3a://b/k', 'abfss://c@a/k', 'gs://b/k', 'dbfs://x/y', 'file:///tmp/x'].every(isObjectStoreUrl)).toBe(true);
    expect(['/Volumes/cat/sch/vol/x.ndjson', 'landing/x.ndjson', 'C:\\data\\x.ndjson', 'c:/data/x.ndjson', './s3://x'].some(isObjectStoreUrl)).toBe(false);
  });

  it('Spark reads them; Debezium envelopes there are refused, since scd unwraps those itself', () => {
    const spark = { dialect: sparkDialect } as Driver;
    const files = resolveInputs(['s3://bucket/changes.ndjson']);
    expect(() => checkInputsReadable(spark, flow, files)).not.toThrow();
    const debezium = defineFlow({ target: 'people', keys: 'id', sequenceBy: 'ts', source: { path: 'changes/', format: 'debezium' } });
    expect(refusal(() => checkInputsReadable(spark, debezium, files))).toMatchObject({
      code: 'INPUT_UNREADABLE',
      problem: 'input s3://bucket/changes.ndjson is an object-store URL, and scd reads Debezium envelopes itself, on this machine',
    });
  });

  describe('on DuckDB', () => {
    let tmp: { dir: string; cleanup: () => void };
    let duck: Driver;
    beforeAll(async () => {
      tmp = tempDir();
      duck = await openDriver(path.join(tmp.dir, 'db.duckdb'));
    });
    afterAll(async () => {
      await duck?.close();
      tmp.cleanup();
    });

    it('an URL input is refused before anything is read or written, naming the engine and the fix', async () => {
      const local = path.join(tmp.dir, 'ok.ndjson');
      writeFileSync(local, '{"id":1,"ts":1}\n');
      const files = resolveInputs([local, `file://${local}`]);
      await expect(applyFiles(duck, flow, files)).rejects.toMatchObject({
        code: 'INPUT_UNREADABLE',
        problem: `input file://${local} is an object-store URL, which only a Spark database reads itself (this flow's database is duckdb)`,
        fix: 'copy the file to a local path, or run the flow on Spark (--db sc://…)',
      });
      expect(await duck.columns('people')).toBeUndefined();
    });

    it('an URL landing folder is refused too, kept as written by the flow', async () => {
      const landing = defineFlow({ target: 'people', keys: 'id', sequenceBy: 'ts', source: { path: 's3://bucket/landing/' } });
      expect(landing.source?.path).toBe('s3://bucket/landing/');
      await expect(applySourceWith(duck, landing)).rejects.toMatchObject({
        code: 'SOURCE_INVALID',
        problem: "source path s3://bucket/landing/ is an object-store URL, which only a Spark database reads itself (this flow's database is duckdb)",
        fix: 'land the files in a local folder, or run the flow on Spark (--db sc://…)',
      });
      expect(await duck.columns('people')).toBeUndefined();
      // `scd status` of such a flow says nothing of its pending files, and fails on nothing.
      expect(await flowStatus(duck, landing)).toMatchObject({ applied: false, pendingFiles: undefined });
    });
  });
});
