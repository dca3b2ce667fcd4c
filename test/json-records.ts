/** Records for the JSON type-sampling tests of both engines (test/unit, test/postgres). */

/** More records than the sample both engines type JSON from (DuckDB's default, 20,480). */
export const N = 25_000;
const day = (i: number) => `2024-01-${String((i % 28) + 1).padStart(2, '0')}`;
/** Record i of a file the sample describes: integer, double, boolean, text, date, timestamp. */
export const regular = (i: number) => ({ id: i, n: i * 3, x: i + 0.5, b: i % 2 === 0, s: `name ${i}`, d: day(i), t: `${day(i)} 10:00:00` });
