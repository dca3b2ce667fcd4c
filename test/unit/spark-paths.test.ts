/** A path given to Spark's file sources names one file, whatever characters its name holds (spark-paths.ts). */
import { describe, expect, it } from 'vitest';
import { literalSparkPath } from '../../src/dialects/spark/spark-paths.js';

describe('literalSparkPath', () => {
  it('escapes every character Hadoop globs read as a pattern, each with a backslash', () => {
    expect(literalSparkPath('/data/day[1]*.ndjson')).toBe('/data/day\\[1\\]\\*.ndjson');
    expect(literalSparkPath('s3://b/x {a,b}/e?.csv')).toBe('s3://b/x \\{a,b\\}/e\\?.csv');
    expect(literalSparkPath('C:\\odd\\name')).toBe('C:\\\\odd\\\\name');
  });

  it('leaves a path without them as it is', () => {
    expect(literalSparkPath('abfss://c@a.dfs.core.windows.net/raw/2026-12-06/part-0001.parquet')).toBe('abfss://c@a.dfs.core.windows.net/raw/2026-12-06/part-0001.parquet');
  });
});
