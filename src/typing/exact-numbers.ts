import { type Dialect, exactDigits } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { StagedColumn } from './cast.js';
import { beyondDouble } from './lexical.js';

/**
 * Number columns that meet fractions (docs/TYPES.md "Integers and fractions"). A type is never
 * chosen that changes a value already read or committed:
 * - an integer or decimal column of a target that meets fractions becomes the decimal that holds
 *   both, DECIMAL(i + s, s) (never a double, which would round committed integers beyond 2^53);
 * - a fresh column of integers and fractions is a double, unless one of its integers lies beyond
 *   ±2^53 (a double would round it): then the same decimal;
 * with s the most digits after the point of any value, and i at least 19 (every 64-bit integer)
 * or the most digits before it. When i + s exceeds 38 no decimal holds them: the apply stops,
 * naming the fix (`columnTypes`).
 */

/** What a column's values need: digits before and after the point, and whether an integer lies beyond ±2^53. */
export interface NumberDigits {
  integer: number;
  scale: number;
  beyondDouble: boolean;
}

/** Plain decimal notation (no exponent): its digits can be counted from its text. */
const PLAIN = '[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)';
/** The largest integer a double holds together with all smaller ones (2^53). */
const DOUBLE_EXACT = '9007199254740992';
/** The most digits a decimal has on every engine. */
export const MAX_PRECISION = 38;
/** Digits before the point that hold every 64-bit integer. */
const BIGINT_DIGITS = 19;

/**
 * The digits the values of these staged columns need, in one pass. Values in exponent notation are
 * not counted (a decimal column does not take them: they are quarantined when they do not fit).
 */
export async function numberDigits(driver: Driver, table: string, columns: Array<{ name: string; staged: StagedColumn }>): Promise<Map<string, NumberDigits>> {
  const out = new Map<string, NumberDigits>();
  if (!columns.length) return out;
  const d = driver.dialect;
  const q = d.quote;
  const texts = columns.map((c, j) => `${textOf(d, q(c.name), c.staged)} AS x${j}`);
  const digits = columns.map((_, j) => {
    const t = `x${j}`;
    // A number beyond every double fits no number type: it is quarantined, and needs no digits.
    const plain = `(${d.matches(t, PLAIN)} AND NOT ${beyondDouble(d, t)})`;
    const before = `length(ltrim(split_part(${t}, '.', 1), '+-0'))`;
    return `CASE WHEN ${plain} THEN ${before} END AS i${j}, CASE WHEN ${plain} THEN length(split_part(${t}, '.', 2)) END AS s${j},
      CASE WHEN ${plain} AND ${t} NOT LIKE '%.%' AND (${before} > ${DOUBLE_EXACT.length} OR (${before} = ${DOUBLE_EXACT.length} AND ltrim(${t}, '+-0') > '${DOUBLE_EXACT}')) THEN 1 ELSE 0 END AS b${j}`;
  });
  const row = (
    await driver.query(
      `SELECT ${columns.map((_, j) => `max(i${j}) AS i${j}, max(s${j}) AS s${j}, max(b${j}) AS b${j}`).join(', ')}
     FROM (SELECT ${digits.join(', ')} FROM (SELECT ${texts.join(', ')} FROM ${q(table)}${d.computeOnce}) x${d.computeOnce}) y`,
    )
  )[0]!;
  for (const [j, c] of columns.entries()) out.set(c.name, { integer: Number(row[`i${j}`] ?? 0), scale: Number(row[`s${j}`] ?? 0), beyondDouble: Number(row[`b${j}`] ?? 0) > 0 });
  return out;
}

/** A staged value's text as written (a typed value's text as the engine writes it). */
function textOf(d: Dialect, column: string, staged: StagedColumn): string {
  if (staged.lexical === 'json') return d.jsonText(column);
  if (staged.lexical === 'text') return column;
  return `CAST(${column} AS ${d.types.text})`;
}

/**
 * The decimal that holds these digits and every value of `stored` (an exact number type, when the
 * column exists), or a refusal naming the fix.
 */
export function exactDecimal(d: Dialect, column: string, digits: NumberDigits, stored: string | undefined, origin: string | undefined): string {
  const was = stored === undefined ? undefined : exactDigits(stored);
  const scale = Math.max(digits.scale, was?.scale ?? 0);
  const integer = Math.max(digits.integer, was?.integer ?? 0, BIGINT_DIGITS);
  if (integer + scale <= MAX_PRECISION) return d.decimal(integer + scale, scale);
  const holder = stored === undefined ? `integers beyond 2^53 and fractions` : `fractions, and it holds ${stored} values`;
  throw new ScdError(
    'SCHEMA_CHANGE',
    `column "${column}" has ${holder}: no decimal of ${MAX_PRECISION} digits holds values of ${integer} digits before the point and ${scale} after it, and a double would round them`,
    {
      file: origin,
      fix: `declare its type, e.g. columnTypes: { ${column}: decimal(${MAX_PRECISION},${MAX_PRECISION - Math.min(integer, MAX_PRECISION)}) }${stored === undefined ? ` (or double, to round)` : ''}; values that do not fit are quarantined`,
    },
  );
}
