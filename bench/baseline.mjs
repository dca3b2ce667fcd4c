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

/**
 * The same two steps on PostgreSQL. The file is loaded with COPY (one line per row into a jsonb
 * column, the usual way to bulk-load NDJSON: a delimiter and a quote character JSON text never
 * holds), then typed with jsonb_to_record (explicit types, as on DuckDB) and deduplicated with
 * DISTINCT ON (PostgreSQL has no QUALIFY); staging is ANALYZEd (temporary tables are never
 * auto-analyzed) so the joins get a sane plan. A step is [name, sql] or [name, {copy, file}].
 */
export function baselineStepsPostgres(file) {
  const columns = Object.entries(COLUMNS)
    .map(([n, t]) => `${n} ${t}`)
    .join(', ');
  const [, close] = baselineSteps(file)[1];
  const [, insert] = baselineSteps(file)[2];
  return [
    ['load', `CREATE TEMP TABLE raw (doc jsonb)`],
    ['load', { copy: `COPY raw (doc) FROM STDIN WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', ESCAPE E'\\x02')`, file }],
    [
      'dedupe',
      `CREATE TEMP TABLE stg AS
       SELECT DISTINCT ON (r.id) r.*
       FROM raw, jsonb_to_record(raw.doc) AS r(${columns})
       ORDER BY r.id, r.updated_at DESC`,
    ],
    ['dedupe', `ANALYZE stg`],
    ['close', close],
    ['insert', insert],
    ['drop staging', `DROP TABLE stg`],
    ['drop staging', `DROP TABLE raw`],
  ];
}
