import { createWriteStream } from 'node:fs';
import { LINE_COLUMN } from '../dialects/driver.js';
import { decodeLine, eachLine, end, write } from './lines.js';

/** Columns a Debezium envelope adds to the row it carries. */
export const DEBEZIUM_COLUMNS = { op: '_op', tsMs: '_ts_ms', lsn: '_lsn' } as const;

export interface DebeziumScan {
  good: number;
  bad: number;
  /** Kafka tombstones (a null value after a delete): skipped by design, counted. */
  tombstones: number;
}

const OPS = new Set(['c', 'r', 'u', 'd', 't']);

/**
 * Unwrap Debezium envelopes (with or without the Kafka Connect schema/payload wrapper) into flat
 * rows: `c`/`r`/`u` carry `after`, `d` carries `before` (its key), `t` carries nothing; each row
 * gets `_op`, `_ts_ms` (source.ts_ms, else the envelope's ts_ms) and `_lsn` (source.lsn; for MySQL
 * binlog file number × 2³² + position; else 0) and its line number. Lines that are not envelopes
 * go to `badOut` as {line, reason, raw}. Streams line by line.
 */
export async function flattenDebezium(file: string, goodOut: string, badOut: string): Promise<DebeziumScan> {
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const counts: DebeziumScan = { good: 0, bad: 0, tombstones: 0 };
  await eachLine(file, (bytes, line) => {
    const reject = (reason: string, raw: string) => {
      counts.bad++;
      return write(bad, JSON.stringify({ line, reason, raw }) + '\n');
    };
    const decoded = decodeLine(bytes);
    if ('reason' in decoded) return reject(decoded.reason, decoded.raw);
    const text = decoded.text;
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return reject(`malformed JSON: ${(e as Error).message}`, text);
    }
    const row = unwrap(value);
    if (row === 'tombstone') {
      counts.tombstones++;
      return;
    }
    if (typeof row === 'string') return reject(row, text);
    counts.good++;
    return write(good, JSON.stringify({ ...row, [LINE_COLUMN]: line }) + '\n');
  });
  await Promise.all([end(good), end(bad)]);
  return counts;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One envelope → a flat row, 'tombstone', or the reason it is not an envelope. */
export function unwrap(value: unknown): Obj | 'tombstone' | string {
  if (value === null) return 'tombstone';
  if (!isObj(value)) return 'not a Debezium envelope (not a JSON object)';
  let env: unknown = value;
  if ('payload' in value && ('schema' in value || Object.keys(value).length === 1)) {
    env = value.payload;
    if (env === null) return 'tombstone';
    if (!isObj(env)) return 'not a Debezium envelope (payload is not an object)';
  }
  const e = env as Obj;
  if (!('op' in e)) return 'not a Debezium envelope (no "op")';
  const op = e.op;
  if (typeof op !== 'string' || !OPS.has(op)) return `unknown Debezium op ${JSON.stringify(op)}`;
  const source = isObj(e.source) ? e.source : {};
  let row: Obj = {};
  if (op === 'd') {
    if (!isObj(e.before)) return 'a Debezium delete without "before" (its key)';
    row = e.before;
  } else if (op !== 't') {
    if (!isObj(e.after)) return `a Debezium "${op}" event without "after"`;
    row = e.after;
  }
  const tsMs = typeof source.ts_ms === 'number' ? source.ts_ms : typeof e.ts_ms === 'number' ? e.ts_ms : null;
  return { ...row, [DEBEZIUM_COLUMNS.op]: op, [DEBEZIUM_COLUMNS.tsMs]: tsMs, [DEBEZIUM_COLUMNS.lsn]: position(source) };
}

/** The position of an event in the source's log, as one integer, for ties of ts_ms. */
function position(source: Obj): number {
  if (typeof source.lsn === 'number') return source.lsn;
  if (typeof source.lsn === 'string' && /^\d+$/.test(source.lsn)) return Number(source.lsn);
  if (typeof source.file === 'string' && typeof source.pos === 'number') {
    const n = /(\d+)$/.exec(source.file);
    return (n ? Number(n[1]) : 0) * 2 ** 32 + source.pos;
  }
  if (typeof source.scn === 'string' && /^\d+$/.test(source.scn)) return Number(source.scn);
  return 0;
}
