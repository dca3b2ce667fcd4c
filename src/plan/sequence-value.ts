import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';

/**
 * A value of the sequence given by a person (`as-of TIME`, `compact --before T`), checked before
 * it reaches SQL and written the way both engines compare it exactly with the sequence column
 * (docs/decisions/0020-a-time-argument-is-checked-before-sql.md):
 *
 * - dates and timestamps: ISO-8601 — a date, or a date and time (T or a space) with optional
 *   seconds, any fraction, and Z, ±hh, ±hhmm or ±hh:mm — that exists in the calendar. A time with
 *   a zone is converted to UTC (the engines would drop its zone against a column without one); a
 *   time without a zone is UTC (the drivers' session zone). The fraction is cut to the column's
 *   precision, and a time to its day for a DATE column: the engines would round instead, and the
 *   floor is what `start <= T < end` means against coarser values.
 * - numbers: a decimal number, floored to the column's scale (0 for an integer) and within its range.
 * - text: any text (the sequence compares as text).
 *
 * Anything else is refused with ScdError('USAGE'), one line naming the value and the forms accepted.
 */
export function sequenceValue(text: string, column: ColumnInfo): string | undefined {
  const kind = kindOf(column.type);
  if (!kind) return undefined;
  switch (kind.kind) {
    case 'text':
      return text;
    case 'float':
      return floatValue(text, column);
    case 'exact':
      return exactValue(text, column, kind);
    default:
      return timeValue(text, kind);
  }
}

/**
 * sequenceValue, and for a column type it does not know (TIME, UUID, ...) the engine's own cast,
 * its refusal turned into a person's error. Returns the text to bind in place of `text`.
 */
export async function checkedSequenceValue(driver: Driver, text: string, column: ColumnInfo): Promise<string> {
  const value = sequenceValue(text, column);
  if (value !== undefined) return value;
  try {
    await driver.query(`SELECT CAST($1 AS ${column.type}) AS v`, [text]);
  } catch {
    throw new ScdError('USAGE', `"${text}" is not a value of the sequence column "${column.name}" (${column.type})`, {
      fix: `give a ${column.type} value`,
    });
  }
  return text;
}

type Kind =
  | { kind: 'text' }
  | { kind: 'float' }
  /** Exact numbers in units of 10^-scale (no scale: as given), within ±max (or min..max). */
  | { kind: 'exact'; scale?: number; min?: bigint; max?: bigint }
  | { kind: 'date' }
  /** digits: fraction digits kept (the column's precision). */
  | { kind: 'timestamp'; zoned: boolean; digits: number };

const BITS: Record<string, [bits: number, signed: boolean]> = {
  tinyint: [8, true],
  int1: [8, true],
  smallint: [16, true],
  int2: [16, true],
  integer: [32, true],
  int: [32, true],
  int4: [32, true],
  bigint: [64, true],
  int8: [64, true],
  hugeint: [128, true],
  int128: [128, true],
  utinyint: [8, false],
  usmallint: [16, false],
  uinteger: [32, false],
  ubigint: [64, false],
  uhugeint: [128, false],
};

/** The comparison a type's values follow, from its name in either engine; undefined when unknown. */
function kindOf(type: string): Kind | undefined {
  const t = type.trim().toLowerCase().replace(/\s+/g, ' ');
  const bits = BITS[t];
  if (bits) {
    const [n, signed] = bits;
    return signed ? { kind: 'exact', scale: 0, min: -(1n << BigInt(n - 1)), max: (1n << BigInt(n - 1)) - 1n } : { kind: 'exact', scale: 0, min: 0n, max: (1n << BigInt(n)) - 1n };
  }
  const dec = /^(?:decimal|numeric)(?:\((\d+)(?:, ?(\d+))?\))?$/.exec(t);
  if (dec) {
    if (dec[1] === undefined) return { kind: 'exact' };
    const limit = 10n ** BigInt(dec[1]) - 1n;
    return { kind: 'exact', scale: Number(dec[2] ?? 0), min: -limit, max: limit };
  }
  if (/^(double|double precision|float|float4|float8|real)$/.test(t)) return { kind: 'float' };
  if (t === 'date') return { kind: 'date' };
  const ts = /^(timestamp|datetime|timestamp_(s|ms|us|ns))(?:\((\d)\))?( without time zone| with time zone)?$/.exec(t);
  if (ts) {
    const unit = { s: 0, ms: 3, us: 6, ns: 9 }[ts[2] ?? 'us']!;
    return { kind: 'timestamp', zoned: ts[4] === ' with time zone', digits: ts[3] === undefined ? unit : Number(ts[3]) };
  }
  if (t === 'timestamptz' || /^timestamptz\((\d)\)$/.test(t)) return { kind: 'timestamp', zoned: true, digits: Number(/\((\d)\)/.exec(t)?.[1] ?? 6) };
  if (/^(varchar|text|string|bpchar|char|character|character varying|nvarchar)(\(\d+\))?$/.test(t)) return { kind: 'text' };
  return undefined;
}

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

function notANumber(text: string, column: ColumnInfo, scale?: number): ScdError {
  return new ScdError('USAGE', `"${text}" is not a number`, {
    fix: `the sequence "${column.name}" is ${column.type}: give a number such as ${scale === 0 ? '42' : '42 or 4.2'}`,
  });
}

function floatValue(text: string, column: ColumnInfo): string {
  const s = text.trim();
  const m = NUMBER.exec(s);
  if (!m || !(m[2] || m[3])) throw notANumber(text, column);
  if (!Number.isFinite(Number(s))) throw new ScdError('USAGE', `"${text}" is beyond the range of the sequence "${column.name}" (${column.type})`, { fix: 'give a smaller number' });
  return s;
}

/** The number floored to `scale` fraction digits, within the type's range, as decimal text. */
function exactValue(text: string, column: ColumnInfo, kind: Extract<Kind, { kind: 'exact' }>): string {
  const s = text.trim();
  const m = NUMBER.exec(s);
  if (!m || !(m[2] || m[3])) throw notANumber(text, column, kind.scale);
  if (kind.scale === undefined) return s;
  const [, sign, whole = '', frac = '', exp = '0'] = m;
  const digits = BigInt(`${whole}${frac}` || '0');
  // value = ±digits × 10^shift in units of 10^-scale
  const shift = Number(exp) - frac.length + kind.scale;
  const beyond = () =>
    new ScdError('USAGE', `"${text}" is beyond the range of the sequence "${column.name}" (${column.type})`, {
      fix: `give a number from ${render(kind.min!, kind.scale!)} to ${render(kind.max!, kind.scale!)}`,
    });
  let units: bigint;
  if (digits === 0n) units = 0n;
  else if (shift >= 0) {
    if (shift > 200) throw beyond();
    units = digits * 10n ** BigInt(shift) * (sign === '-' ? -1n : 1n);
  } else if (-shift > 200) units = sign === '-' ? -1n : 0n;
  else {
    const unit = 10n ** BigInt(-shift);
    const q = digits / unit;
    units = sign === '-' ? -(q + (digits % unit === 0n ? 0n : 1n)) : q;
  }
  if ((kind.min !== undefined && units < kind.min) || (kind.max !== undefined && units > kind.max)) throw beyond();
  return render(units, kind.scale);
}

/** Units of 10^-scale as decimal text. */
function render(units: bigint, scale: number): string {
  if (scale === 0) return units.toString();
  const neg = units < 0n;
  const abs = (neg ? -units : units).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${abs.slice(0, -scale)}.${abs.slice(-scale)}`;
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;
const FORMS = 'give 2025-06-15, 2025-06-15T09:00:00 or 2025-06-15T09:00:00Z';

function notATime(text: string, why?: string): ScdError {
  return new ScdError('USAGE', `"${text}" is not a time${why ? `: ${why}` : ''}`, { fix: FORMS });
}

function daysIn(year: number, month: number): number {
  return month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function timeValue(text: string, kind: Extract<Kind, { kind: 'date' | 'timestamp' }>): string {
  const m = TIME.exec(text.trim());
  if (!m) throw notATime(text);
  const [y, mo, d, h = 0, mi = 0, sec = 0] = [1, 2, 3, 4, 5, 6].map((i) => (m[i] === undefined ? undefined : Number(m[i])));
  const fraction = m[7] ?? '';
  const zone = m[8];
  if (y! < 1) throw notATime(text, 'years start at 0001');
  if (mo! < 1 || mo! > 12) throw notATime(text, `there is no month ${mo}`);
  if (d! < 1 || d! > daysIn(y!, mo!)) throw notATime(text, `${pad(y!, 4)}-${pad(mo!)} has ${daysIn(y!, mo!)} days`);
  if (h > 23) throw notATime(text, `there is no hour ${h}`);
  if (mi > 59) throw notATime(text, `there is no minute ${mi}`);
  if (sec > 59) throw notATime(text, `there is no second ${sec}`);
  let offset = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    const oh = Number(zone.slice(1, 3));
    const om = zone.length === 3 ? 0 : Number(zone.slice(-2));
    if (oh > 23 || om > 59) throw notATime(text, `there is no zone offset ${zone}`);
    offset = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // The instant in UTC (a time without a zone is UTC already); setUTCFullYear keeps years < 100.
  const at = new Date(0);
  at.setUTCFullYear(y!, mo! - 1, d!);
  at.setUTCHours(h, mi - offset, sec, 0);
  const year = at.getUTCFullYear();
  if (year < 1) throw notATime(text, 'it falls before the year 0001');
  const day = `${pad(year, 4)}-${pad(at.getUTCMonth() + 1)}-${pad(at.getUTCDate())}`;
  if (kind.kind === 'date') return day;
  const digits = fraction.slice(0, kind.digits);
  const clock = `${pad(at.getUTCHours())}:${pad(at.getUTCMinutes())}:${pad(at.getUTCSeconds())}${digits ? `.${digits}` : ''}`;
  return `${day}T${clock}${kind.zoned ? 'Z' : ''}`;
}
