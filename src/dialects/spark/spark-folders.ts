import { ScdError } from '../../errors.js';
import type { Row, StoredFile } from '../driver.js';
import { sparkDialect } from './spark-dialect.js';
import { literalSparkPath } from './spark-paths.js';

const q = sparkDialect.quote;

/** The little of the driver listing needs. */
export interface SparkQueries {
  query(sql: string): Promise<Row[]>;
}

/** Spark names a local file `file:/x`; as an URL, the way it was given (`file:///x`). */
export const asUrl = (path: string): string => path.replace(/^([a-z][a-z0-9+.-]*):\/(?!\/)/i, '$1:///');

/**
 * The files at `folder` (an URL) as Spark lists them with its own file systems and credentials:
 * Spark's `binaryFile` source gives each file's path, length and time without reading its
 * content, and leaves out hidden files (`.`, `_`) and subfolders, as scd's own listing of a local
 * folder does. In name order.
 */
export async function listSparkFolder(db: SparkQueries, folder: string): Promise<StoredFile[]> {
  let rows: Row[];
  try {
    rows = await db.query(`SELECT path, length, CAST(unix_millis(modificationTime) AS BIGINT) AS mtime FROM binaryFile.${q(literalSparkPath(folder))}`);
  } catch (e) {
    if (/PATH_NOT_FOUND/.test(String((e as Error).message)))
      throw new ScdError('SOURCE_INVALID', `source path ${folder} does not exist (as the Spark server sees it)`, {
        field: 'source.path',
        fix: 'create the folder or correct the path',
      });
    throw e;
  }
  return rows.map((r) => ({ path: asUrl(String(r.path)), size: Number(r.length), mtimeMs: Number(r.mtime) })).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Each file's SHA-256 (hex), its content read by Spark: one query for all of them. */
export async function hashSparkFiles(db: SparkQueries, files: string[]): Promise<Map<string, string>> {
  if (!files.length) return new Map();
  const rows = await db.query(files.map((f) => `SELECT path, sha2(content, 256) AS h FROM binaryFile.${q(literalSparkPath(f))}`).join('\nUNION ALL\n'));
  return new Map(rows.map((r) => [asUrl(String(r.path)), String(r.h)]));
}
