import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { TMP } from '../store/names.js';
import { sourceColumnsOf, stagingColumnsOf } from '../typing/staged-types.js';
import { DROP, REASON } from './events-sql.js';

/**
 * Where each record orders its own keys (JSON): the keys of the first of the given records (each
 * file's first applied one; the earliest file first), in the order written, or undefined where
 * the source has one order for every record (CommitSpec.recordKeys).
 */
export type RecordKeys = (driver: Driver, firsts: Array<{ file: string; line: number }>) => Promise<string[] | undefined>;

/**
 * The staged columns in the order of the new target's first applied record (its keys as written,
 * then any other column in the order first seen), or undefined when that is their order already:
 * a quarantined or dropped record read before it never decides the order (docs/decisions/
 * 0008-a-new-targets-column-order.md), which also orders ties (their canonical text).
 */
export async function orderByFirstApplied(driver: Driver, recordKeys: RecordKeys, staged: ColumnInfo[]): Promise<ColumnInfo[] | undefined> {
  const q = driver.dialect.quote;
  const rows = await driver.query(
    `SELECT ${q(FILE_COLUMN)} AS file, min(${q(LINE_COLUMN)}) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)}) AS line,
       count(*) FILTER (WHERE ${q(REASON)} IS NOT NULL OR ${q(DROP)}) AS left_out
     FROM ${q(TMP.batch)} GROUP BY ${q(FILE_COLUMN)}`,
  );
  if (!rows.some((r) => Number(r.left_out) > 0)) return undefined;
  const firsts = rows.filter((r) => r.line !== null && r.line !== undefined).map((r) => ({ file: String(r.file), line: Number(r.line) }));
  const keys = firsts.length ? await recordKeys(driver, firsts) : undefined;
  if (!keys) return undefined;
  const place = new Map(keys.map((k, i) => [k, i]));
  const source = sourceColumnsOf(staged);
  const ordered = source
    .map((c, i) => ({ c, rank: place.get(c.name) ?? keys.length + i }))
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.c);
  if (ordered.every((c, i) => c === source[i])) return undefined;
  return [...ordered, ...stagingColumnsOf(staged)];
}
