/** headerNames: a CSV header's column names made unique as DuckDB's reader makes them. */
import { describe, expect, it } from 'vitest';
import { headerNames } from '../../src/files/csv-header.js';

describe('headerNames', () => {
  it('an empty name is column<i>; a repeated name gets the first free suffix', () => {
    expect(headerNames(['id', '', 'a', 'a', 'a'])).toEqual(['id', 'column1', 'a', 'a_1', 'a_2']);
  });

  it('a suffixed name never takes a name the header already holds', () => {
    expect(headerNames(['a', 'a', 'a_1'])).toEqual(['a', 'a_1', 'a_1_1']);
  });

  it('with names that ignore case (DuckDB), names equal but for case are told apart by suffix', () => {
    const lower = (n: string) => n.toLowerCase();
    expect(headerNames(['id', 'Name', 'name'], lower)).toEqual(['id', 'Name', 'name_1']);
    expect(headerNames(['a', 'A', 'a_1'], lower)).toEqual(['a', 'A_1', 'a_1_1']);
    // Without it (PostgreSQL, Spark), they are two names.
    expect(headerNames(['id', 'Name', 'name'])).toEqual(['id', 'Name', 'name']);
  });
});
