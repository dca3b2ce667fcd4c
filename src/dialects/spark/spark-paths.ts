/**
 * A file's path or URL as Spark's file sources (text, json, parquet, binaryFile) take it. Spark
 * reads a path holding any of `* ? [ ] { } \` as a glob pattern (Hadoop's): a file named
 * `day[1].ndjson` would be looked for as `day1.ndjson`, and one named `day?.ndjson` would read
 * `day1.ndjson` and `day2.ndjson` as well. Each such character is escaped with a backslash, which
 * Hadoop's globs read as that character alone, so the path names exactly the one file (or folder)
 * it was given as.
 */
export function literalSparkPath(path: string): string {
  return path.replace(/[\\*?[\]{}]/g, (c) => `\\${c}`);
}
