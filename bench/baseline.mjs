// The baseline: the two-step SCD2 SQL of the seed article "How to Master SCD Type 2"
// (close changed current rows with IS DISTINCT FROM, insert new versions with an anti-join on
// current rows), in one transaction, with the staging rows deduplicated by key (latest
// updated_at first) as the article recommends. Written for DuckDB; run through the same driver.
//
// Deliberate choices, all in the baseline's favour or neutral (see bench/README.md):
// - effective_from / effective_to take the source's updated_at, not CURRENT_DATE (the article's
//   own advice for late-arriving data), so the in-order result is comparable row by row;
// - no surrogate key and no primary-key index (DuckDB has no IDENTITY; an ART index slows updates);
// - deletes (op = 'D', not in the article) close the current row and insert nothing: two predicates;
// - the staging table is read with explicit column types (what a hand-written job knows).

import { ATTRS, COLUMNS } from './generate.mjs';

export const BASE_TABLE = 'dim_base';

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;

/** The baseline table, with the article's helper columns. */
export function createBaseTableSql() {
  const cols = Object.entries(COLUMNS)
    .filter(([n]) => n !== 'updated_at' && n !== 'op')
    .map(([n, t]) => `${n} ${t}${n === 'id' ? ' NOT NULL' : ''}`);
  return `CREATE TABLE ${BASE_TABLE} (
    ${cols.join(',\n    ')},
    effective_from TIMESTAMP NOT NULL,
    effective_to   TIMESTAMP NOT NULL DEFAULT TIMESTAMP '9999-12-31',
    is_current     BOOLEAN   NOT NULL DEFAULT TRUE
  )`;
}

/** The statements of one baseline run (inside BEGIN ... COMMIT), each with a phase name. */
export function baselineSteps(file) {
  const columns = `{${Object.entries(COLUMNS)
    .map(([n, t]) => `${n}: '${t}'`)
    .join(', ')}}`;
  const changed = ATTRS.map((c) => `d.${c} IS DISTINCT FROM s.${c}`).join('\n         OR ');
  return [
    [
      'load+dedupe',
      `CREATE TEMP TABLE stg AS
       SELECT * FROM read_json(${sqlString(file)}, format = 'newline_delimited', columns = ${columns})
       QUALIFY row_number() OVER (PARTITION BY id ORDER BY updated_at DESC) = 1`,
    ],
    [
      'close',
      `UPDATE ${BASE_TABLE} AS d
       SET    effective_to = s.updated_at,
              is_current   = FALSE
       FROM   stg s
       WHERE  d.id = s.id
         AND  d.is_current = TRUE
         AND  (s.op = 'D'
         OR ${changed})`,
    ],
    [
      'insert',
      `INSERT INTO ${BASE_TABLE} (id, ${ATTRS.join(', ')}, effective_from)
       SELECT s.id, ${ATTRS.map((c) => `s.${c}`).join(', ')}, s.updated_at
       FROM   stg s
       LEFT JOIN ${BASE_TABLE} d
              ON d.id = s.id
             AND d.is_current = TRUE
       WHERE  d.id IS NULL
         AND  s.op <> 'D'`,
    ],
    ['drop staging', `DROP TABLE stg`],
  ];
}
