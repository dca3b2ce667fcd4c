/**
 * A time (or number) given for the sequence by a person (as-of TIME, compact --before T): the
 * forms accepted, how each is written for the engines, and the one-line refusals
 * (docs/decisions/0020-a-time-argument-is-checked-before-sql.md).
 */
import { describe, expect, it } from 'vitest';
import { ScdError } from '../../src/index.js';
import { sequenceValue } from '../../src/plan/sequence-value.js';

const col = (type: string) => ({ name: 'ts', type });
const refusal = (text: string, type: string): ScdError => {
  try {
    sequenceValue(text, col(type));
  } catch (e) {
    expect(e).toBeInstanceOf(ScdError);
    expect((e as ScdError).code).toBe('USAGE');
    return e as ScdError;
  }
  throw new Error(`"${text}" was accepted for ${type}`);
};

describe('a time for a date or timestamp sequence', () => {
  it('accepts ISO-8601 dates and date-times (T or space, any fraction, Z, ±hh, ±hhmm, ±hh:mm)', () => {
    const naive = (t: string) => sequenceValue(t, col('TIMESTAMP'));
    expect(naive('2025-06-15')).toBe('2025-06-15T00:00:00');
    expect(naive('2025-06-15T09:00')).toBe('2025-06-15T09:00:00');
    expect(naive('2025-06-15 09:00:00')).toBe('2025-06-15T09:00:00');
    expect(naive('2025-06-15t09:00:00.5')).toBe('2025-06-15T09:00:00.5');
    expect(naive('2025-06-15T09:00:00.123456789')).toBe('2025-06-15T09:00:00.123456');
    // A zone is converted to UTC, whichever way it is written.
    for (const z of ['+02', '+0200', '+02:00']) expect(naive(`2025-06-15T09:00:00${z}`)).toBe('2025-06-15T07:00:00');
    expect(naive('2025-06-15T09:00:00Z')).toBe('2025-06-15T09:00:00');
    expect(naive('2025-06-15T09:00:00z')).toBe('2025-06-15T09:00:00');
    expect(naive('2025-01-01T01:30:00+05:30')).toBe('2024-12-31T20:00:00');
    expect(naive('2025-12-31T23:00:00-01:00')).toBe('2026-01-01T00:00:00');
    expect(naive(' 2025-06-15 ')).toBe('2025-06-15T00:00:00');
  });

  it("writes the instant in UTC for a sequence with a zone, and cuts the fraction to the column's precision", () => {
    expect(sequenceValue('2025-06-15T09:00:00+02:00', col('TIMESTAMP WITH TIME ZONE'))).toBe('2025-06-15T07:00:00Z');
    expect(sequenceValue('2025-06-15T09:00:00', col('timestamp with time zone'))).toBe('2025-06-15T09:00:00Z');
    expect(sequenceValue('2025-06-15', col('TIMESTAMPTZ'))).toBe('2025-06-15T00:00:00Z');
    expect(sequenceValue('2025-06-15T09:00:00.987654321', col('TIMESTAMP_NS'))).toBe('2025-06-15T09:00:00.987654321');
    expect(sequenceValue('2025-06-15T09:00:00.987654321', col('TIMESTAMP_MS'))).toBe('2025-06-15T09:00:00.987');
    expect(sequenceValue('2025-06-15T09:00:00.987654321', col('TIMESTAMP_S'))).toBe('2025-06-15T09:00:00');
    expect(sequenceValue('2025-06-15T09:00:00.987654321', col('timestamp(3) without time zone'))).toBe('2025-06-15T09:00:00.987');
  });

  it('gives a DATE sequence the day the time falls on (in UTC)', () => {
    expect(sequenceValue('2025-06-15', col('DATE'))).toBe('2025-06-15');
    expect(sequenceValue('2025-06-15T23:59:59.999', col('date'))).toBe('2025-06-15');
    expect(sequenceValue('2025-06-15T01:00:00+02:00', col('DATE'))).toBe('2025-06-14');
    expect(sequenceValue('2024-02-29', col('DATE'))).toBe('2024-02-29');
    expect(sequenceValue('2000-02-29', col('DATE'))).toBe('2000-02-29');
  });

  it('refuses what is not a time, naming the value and the forms', () => {
    for (const t of ['June 15', '15/06/2025', '2025-6-15', '20250615', 'now', '', '2025-06-15T09', '2025-06-15Z', '2025-06-15 09:00:00 +02:00', '42']) {
      const e = refusal(t, 'TIMESTAMP');
      expect(e.problem).toBe(`"${t}" is not a time`);
      expect(e.oneLine()).toBe(`"${t}" is not a time (fix: give 2025-06-15, 2025-06-15T09:00:00 or 2025-06-15T09:00:00Z)`);
    }
  });

  it('refuses dates the calendar does not have', () => {
    expect(refusal('2025-13-45', 'DATE').problem).toBe('"2025-13-45" is not a time: there is no month 13');
    expect(refusal('2025-02-30', 'DATE').problem).toBe('"2025-02-30" is not a time: 2025-02 has 28 days');
    expect(refusal('2025-02-29', 'TIMESTAMP').problem).toBe('"2025-02-29" is not a time: 2025-02 has 28 days');
    expect(refusal('1900-02-29', 'DATE').problem).toBe('"1900-02-29" is not a time: 1900-02 has 28 days');
    expect(refusal('2025-04-31', 'DATE').message).toMatch(/2025-04 has 30 days/);
    expect(refusal('2025-00-10', 'DATE').message).toMatch(/no month 0/);
    expect(refusal('2025-06-00', 'DATE').message).toMatch(/has 30 days/);
    expect(refusal('2025-06-15T24:00:00', 'TIMESTAMP').message).toMatch(/no hour 24/);
    expect(refusal('2025-06-15T09:60:00', 'TIMESTAMP').message).toMatch(/no minute 60/);
    expect(refusal('2025-06-15T09:00:60', 'TIMESTAMP').message).toMatch(/no second 60/);
    expect(refusal('2025-06-15T09:00:00+24:00', 'TIMESTAMPTZ').message).toMatch(/no zone offset/);
    expect(refusal('0000-01-01', 'DATE').message).toMatch(/years start at 0001/);
  });
});

describe('a number for a numeric sequence', () => {
  it("accepts a number, floored to the column's scale (the floor is exact for start <= T < end)", () => {
    expect(sequenceValue('42', col('BIGINT'))).toBe('42');
    expect(sequenceValue(' +42 ', col('INTEGER'))).toBe('42');
    expect(sequenceValue('1.5', col('BIGINT'))).toBe('1');
    expect(sequenceValue('-1.5', col('bigint'))).toBe('-2');
    expect(sequenceValue('-2.0', col('BIGINT'))).toBe('-2');
    expect(sequenceValue('1e3', col('BIGINT'))).toBe('1000');
    expect(sequenceValue('.5', col('BIGINT'))).toBe('0');
    expect(sequenceValue('1.23456', col('DECIMAL(18,3)'))).toBe('1.234');
    expect(sequenceValue('-1.23456', col('numeric(10,2)'))).toBe('-1.24');
    expect(sequenceValue('7', col('DECIMAL(18,3)'))).toBe('7.000');
    expect(sequenceValue('1.23456789', col('numeric'))).toBe('1.23456789');
    expect(sequenceValue('1.5e-3', col('DOUBLE'))).toBe('1.5e-3');
    expect(sequenceValue('9223372036854775807', col('BIGINT'))).toBe('9223372036854775807');
  });

  it("refuses what is not a number, or beyond the column's range", () => {
    for (const t of ['June 15', '2025-06-15', '', '.', '1,5', '0x10', 'NaN', 'Infinity']) {
      const e = refusal(t, 'BIGINT');
      expect(e.problem).toBe(`"${t}" is not a number`);
      expect(e.fix).toBe('the sequence "ts" is BIGINT: give a number such as 42');
    }
    expect(refusal('9223372036854775808', 'BIGINT').problem).toBe('"9223372036854775808" is beyond the range of the sequence "ts" (BIGINT)');
    expect(refusal('-1', 'UBIGINT').fix).toBe('give a number from 0 to 18446744073709551615');
    expect(refusal('1e400', 'DOUBLE').message).toMatch(/beyond the range/);
    expect(refusal('1000', 'DECIMAL(3,1)').fix).toBe('give a number from -99.9 to 99.9');
    expect(refusal('June 15', 'DOUBLE').problem).toBe('"June 15" is not a number');
  });
});

describe('other sequence types', () => {
  it('a text sequence takes any text; a type it does not know is left to the engine', () => {
    expect(sequenceValue('June 15', col('VARCHAR'))).toBe('June 15');
    expect(sequenceValue('b', col('text'))).toBe('b');
    expect(sequenceValue('09:00:00', col('TIME'))).toBeUndefined();
  });
});
