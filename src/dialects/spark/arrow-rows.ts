import { type Data, type DataType, type Field, makeVector, type RecordBatch, Type } from 'apache-arrow';
import type { Row } from '../driver.js';

/**
 * Arrow IPC data (what Spark Connect sends) as plain rows, the same JSON-like values the DuckDB
 * driver's query() gives, so that code reading rows does not care which engine produced them:
 *
 * - 8/16/32-bit integers and floating point: numbers (NaN and ±Infinity: the texts "NaN",
 *   "Infinity", "-Infinity", as JSON has no such number);
 * - 64-bit integers: their decimal text (exact beyond 2^53; callers use Number() where a count is
 *   meant), decimals: their exact text with the column's scale ("1.50");
 * - dates: "YYYY-MM-DD"; timestamps: ISO-8601 to the microsecond, trailing zeros of the fraction
 *   dropped: "2024-01-02T03:04:05.5Z" for an instant (Spark's TIMESTAMP, sent in UTC), without the
 *   "Z" for a wall-clock time (TIMESTAMP_NTZ);
 * - strings, booleans, null as themselves; structs as objects, arrays as arrays, maps as arrays of
 *   {key, value}; binary as DuckDB writes a blob (printable ASCII as is, a backslash doubled,
 *   any other byte and '"' as \xHH).
 *
 * Values are read from the Arrow buffers directly where arrow's own getters lose precision
 * (timestamps to milliseconds, decimals and 64-bit integers to objects). Appends the rows of one
 * record batch to `out`.
 */
export function appendRows(batch: RecordBatch, out: Row[]): void {
  const fields = batch.schema.fields;
  const columns = fields.map((f, j) => ({ name: f.name, data: batch.data.children[j]!, read: reader(f.type) }));
  for (let i = 0; i < batch.numRows; i++) {
    const row: Row = {};
    for (const c of columns) row[c.name] = c.read(c.data, i);
    out.push(row);
  }
}

type Read = (data: Data, index: number) => unknown;

const utf8 = new TextDecoder('utf-8');

/** A function reading the value at an index of data of `type` (null where the value is null). */
function reader(type: DataType): Read {
  const nonNull = valueReader(type);
  return (data, i) => (data.nullCount > 0 && !data.getValid(i) ? null : nonNull(data, i));
}

function valueReader(type: DataType): Read {
  switch (type.typeId) {
    case Type.Null:
      return () => null;
    case Type.Bool:
      return (d, i) => {
        const bit = d.offset + i;
        return (d.values[bit >> 3]! & (1 << (bit & 7))) !== 0;
      };
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth < 64) return (d, i) => d.values[i] as number;
      return t.isSigned ? (d, i) => String(d.values[i] as bigint) : (d, i) => String(BigInt.asUintN(64, d.values[i] as bigint));
    }
    case Type.Float:
      return (d, i) => jsonNumber(Number(d.values[i]));
    case Type.Decimal: {
      const t = type as unknown as { scale: number; bitWidth: number };
      const words = t.bitWidth / 32;
      return (d, i) => decimalText(d.values as Uint32Array, i * words, words, t.scale);
    }
    case Type.Utf8:
    case Type.LargeUtf8:
      return (d, i) => utf8.decode(bytesAt(d, i));
    case Type.Binary:
    case Type.LargeBinary:
      return (d, i) => blobText(bytesAt(d, i));
    case Type.Date: {
      const t = type as unknown as { unit: number };
      // DateUnit.DAY = 0: int32 days; otherwise int64 milliseconds.
      return t.unit === 0 ? (d, i) => isoDate((d.values[i] as number) * 86_400_000) : (d, i) => isoDate(Number(d.values[i] as bigint));
    }
    case Type.Timestamp: {
      const t = type as unknown as { unit: number; timezone: string | null };
      // TimeUnit: SECOND 0, MILLISECOND 1, MICROSECOND 2, NANOSECOND 3.
      const toMicros = [(v: bigint) => v * 1_000_000n, (v: bigint) => v * 1000n, (v: bigint) => v, (v: bigint) => v / 1000n][t.unit]!;
      const zone = t.timezone ? 'Z' : '';
      return (d, i) => isoTimestamp(toMicros(d.values[i] as bigint), zone);
    }
    case Type.Struct: {
      const parts = type.children.map((f: Field) => ({ name: f.name, read: reader(f.type) }));
      return (d, i) => {
        const o: Row = {};
        parts.forEach((p, j) => {
          o[p.name] = p.read(d.children[j]!, i);
        });
        return o;
      };
    }
    case Type.List:
    case Type.LargeList:
    case Type.Map: {
      const item = reader(type.children[0]!.type);
      return (d, i) => {
        const offsets = d.valueOffsets as unknown as ArrayLike<number | bigint>;
        const start = Number(offsets[i]);
        const end = Number(offsets[i + 1]);
        const child = d.children[0]!;
        const out: unknown[] = [];
        for (let k = start; k < end; k++) out.push(item(child, k));
        return out;
      };
    }
    default:
      // Intervals, times, unions...: arrow's own getter, made JSON-safe.
      return (d, i) => jsonSafe(makeVector(d).get(i));
  }
}

function bytesAt(d: Data, i: number): Uint8Array {
  const offsets = d.valueOffsets as unknown as ArrayLike<number | bigint>;
  return (d.values as Uint8Array).subarray(Number(offsets[i]), Number(offsets[i + 1]));
}

function blobText(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x5c) out += '\\\\';
    else if (b >= 0x20 && b <= 0x7e && b !== 0x22) out += String.fromCharCode(b);
    else out += `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function jsonNumber(n: number): number | string {
  if (Number.isFinite(n)) return n;
  return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Infinity' : '-Infinity';
}

/** Two's complement little-endian words as exact decimal text with `scale` digits after the point. */
function decimalText(words: Uint32Array, at: number, count: number, scale: number): string {
  let v = 0n;
  for (let w = count - 1; w >= 0; w--) v = (v << 32n) | BigInt(words[at + w]!);
  const bits = BigInt(count * 32);
  if (v >> (bits - 1n)) v -= 1n << bits;
  const negative = v < 0n;
  const digits = (negative ? -v : v).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${text}` : text;
}

function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Microseconds since the epoch as ISO-8601, to the microsecond, trailing fraction zeros dropped. */
export function isoTimestamp(micros: bigint, zone: string): string {
  let seconds = micros / 1_000_000n;
  let fraction = micros % 1_000_000n;
  if (fraction < 0n) {
    fraction += 1_000_000n;
    seconds -= 1n;
  }
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, -5); // drop ".000Z"
  const frac = fraction === 0n ? '' : `.${fraction.toString().padStart(6, '0').replace(/0+$/, '')}`;
  return `${whole}${frac}${zone}`;
}

function jsonSafe(v: unknown): unknown {
  if (typeof v === 'bigint') return String(v);
  if (v === null || v === undefined) return null;
  if (typeof v === 'object') return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)));
  return v;
}
