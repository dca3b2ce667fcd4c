import path from 'node:path';
import { ScdError } from '../../errors.js';
import { csvFields, headerNames } from '../../files/csv-header.js';
import { JSON_NUMBER } from '../../files/json-number.js';
import { isObjectStoreUrl } from '../../files/object-store.js';
import { checkSourceKeys } from '../../files/source-keys.js';
import { type ColumnInfo, FILE_COLUMN, type InputFile, type Lexical, LINE_COLUMN, RAW_COLUMN, type Row, type StagedFiles } from '../driver.js';
import { sparkDialect, sparkString } from './spark-dialect.js';
import { literalSparkPath } from './spark-paths.js';

const q = sparkDialect.quote;

/** The little of the driver staging needs. */
export interface SparkStatements {
  run(sql: string): Promise<void>;
  query(sql: string): Promise<Row[]>;
}

/** A file's text without a UTF-8 byte order mark at its start: the mark is no part of a record. */
const WITHOUT_BOM = (text: string) => `regexp_replace(${text}, ${sparkString('^\uFEFF')}, '')`;

/**
 * Spark reads a `.json` file as one document: when it does not parse (a broken element, a file
 * cut short), no element can be told from the others here,
 * so the run stops before anything changes rather than read none of its records.
 */
async function refuseBrokenDocument(db: SparkStatements, documents: string, file: string): Promise<void> {
  const broken = await db.query(
    `SELECT count(*) AS n FROM (${documents}) WHERE d IS NULL AND try_parse_json(concat('[', value, ']')) IS NULL AND NOT value RLIKE ${sparkString('^\\s*$')}`,
  );
  if (Number(broken[0]?.n ?? 0) === 0) return;
  throw new ScdError('INPUT_UNREADABLE', 'not one valid JSON document (a broken element, a file cut short, or JSON lines); nothing was applied', {
    file,
    fix: 'fix the file and apply it again, or name a file of JSON lines .ndjson, where a bad line is quarantined alone',
  });
}

/** A line that holds nothing but spaces, tabs and a carriage return is blank: not a record. */
const BLANK = `^[ \\t\\r]*$`;

/**
 * Stage input files with Spark's own readers, at paths the Spark server reads (a local server:
 * local paths; a cluster: what its file systems name). Each file's text is read whole and split
 * into lines by Spark (so a record's line is its place in the file, as on the other engines):
 * - NDJSON: a line is a record; `from_json` into a map of VARIANT values keeps each value's JSON
 *   kind and text (lexical `json`); a line that is not a JSON object is a reject with its text.
 * - JSON: a file that is one array of objects (or one object); records numbered from 1. A file
 *   that is not one valid document stops the run (refuseBrokenDocument).
 * - CSV: a header line names the columns; every value is text as written (lexical `text`). A
 *   quoted field may not span lines here (docs/SPARK.md).
 * - Parquet: Spark's own types; records numbered in the order Spark reads them.
 * `table` and `rejects` are made as materialized scratch (cached temporary views).
 */
export async function stageSparkFiles(db: SparkStatements, files: InputFile[], table: string, rejects: string): Promise<StagedFiles> {
  // Each file's rows, and how its values are held: JSON text, text as written (CSV), or typed (Parquet).
  const parts: Array<{ select: string; columns: ColumnInfo[]; held: Lexical | 'typed' }> = [];
  const rejectParts: string[] = [];
  const lexical = new Map<string, Lexical>();
  let records = 0;
  for (const [i, file] of files.entries()) {
    const label = sparkString(file.label ?? file.path);
    // A local path as the server names it (absolute); an object-store URL as written.
    const at = literalSparkPath(isObjectStoreUrl(file.path) ? file.path : path.resolve(file.path));
    const where = sparkString(at);
    if (file.format === 'parquet') {
      const rows = `parquet.${q(at)}`;
      const described = await db.query(`DESCRIBE QUERY SELECT * FROM ${rows}`);
      const columns = described.map((r) => ({ name: String(r.col_name), type: String(r.data_type) }));
      checkSourceKeys(
        columns.map((c) => c.name),
        sparkDialect.nameKey,
        sparkDialect.nameProblem,
      );
      records += Number((await db.query(`SELECT count(*) AS n FROM ${rows}`))[0]!.n);
      parts.push({
        select: `SELECT ${columns.map((c) => q(c.name)).join(', ')}, ${label} AS ${q(FILE_COLUMN)}, CAST(${sparkDialect.rowNumberAsRead} AS BIGINT) AS ${q(LINE_COLUMN)}, CAST(NULL AS STRING) AS ${q(RAW_COLUMN)} FROM ${rows}`,
        columns,
        held: 'typed',
      });
      continue;
    }
    const text = `_scd_text_${i}`;
    const lines = `_scd_lines_${i}`;
    await db.run(`CREATE OR REPLACE TEMP VIEW ${q(text)} USING text OPTIONS (path ${where}, wholetext 'true')`);
    if (file.format === 'json') {
      // One document: an array's elements are the records (numbered from 1), an object is one.
      const documents = `SELECT value, try_parse_json(value) AS d FROM (SELECT ${WITHOUT_BOM('value')} AS value FROM ${q(text)})`;
      await refuseBrokenDocument(db, documents, file.label ?? file.path);
      await db.run(`CACHE TABLE ${q(lines)} AS SELECT CAST(e.pos + 1 AS BIGINT) AS line, to_json(e.value) AS raw
        FROM (SELECT CASE WHEN schema_of_variant(d) LIKE 'ARRAY%' THEN d ELSE try_parse_json(concat('[', value, ']')) END AS d
              FROM (${documents})) f,
        LATERAL variant_explode(f.d) e`);
    } else {
      await db.run(`CACHE TABLE ${q(lines)} AS SELECT CAST(l.pos + 1 AS BIGINT) AS line, regexp_replace(l.raw, '\\r$', '') AS raw
        FROM ${q(text)} t LATERAL VIEW posexplode(split(${WITHOUT_BOM('t.value')}, '\\n', -1)) l AS pos, raw WHERE NOT l.raw RLIKE ${sparkString(BLANK)}`);
    }
    if (file.format === 'csv') {
      // The header line, and how many lines there are (one query: the file's views go with it).
      const header = await db.query(`SELECT raw, (SELECT count(*) FROM ${q(lines)}) AS n FROM ${q(lines)} ORDER BY line LIMIT 1`);
      if (!header.length) continue;
      records += Number(header[0]!.n) - 1;
      // A UTF-8 BOM before the header is no part of its first name (as on DuckDB and PostgreSQL).
      const names = headerNames(csvFields(String(header[0]!.raw).replace(/^\uFEFF/, '')));
      checkSourceKeys(names, sparkDialect.nameKey, sparkDialect.nameProblem);
      const schema = names.map((_, k) => `${q(`c${k}`)} STRING`).join(', ');
      // n: the record's fields, its commas outside quoted values plus one (RFC 4180: a quoted value
      // is a run of anything but a lone quote). A record of another count is quarantined, named
      // as files/csv-records.ts names it on the other engines.
      const fields = `size(split(regexp_replace(raw, ${sparkString('"([^"]|"")*"')}, ''), ',', -1))`;
      const parsed = `(SELECT line, raw, from_csv(raw, ${sparkString(schema)}) AS r, ${fields} AS n FROM ${q(lines)} WHERE line > (SELECT min(line) FROM ${q(lines)}))`;
      // A column that another file of the commit holds as JSON stays JSON (asJson below).
      for (const n of names) if (!lexical.has(n)) lexical.set(n, 'text');
      parts.push({
        select: `SELECT ${names.map((n, k) => `r.${q(`c${k}`)} AS ${q(n)}`).join(', ')}, ${label} AS ${q(FILE_COLUMN)}, line AS ${q(LINE_COLUMN)}, raw AS ${q(RAW_COLUMN)} FROM ${parsed} WHERE r IS NOT NULL AND n = ${names.length}`,
        columns: names.map((n) => ({ name: n, type: 'STRING' })),
        held: 'text',
      });
      const reason = `CASE WHEN n <> ${names.length} THEN concat(${sparkString(`expected ${names.length} fields, found `)}, CAST(n AS STRING)) ELSE 'not a CSV record' END`;
      rejectParts.push(`SELECT ${label}, line, ${reason}, raw FROM ${parsed} WHERE r IS NULL OR n <> ${names.length}`);
      continue;
    }
    // JSON lines (and JSON documents' elements): each record a map of its values as VARIANT.
    const objects = `_scd_objects_${i}`;
    // Each line parsed once here; a line that is no object is parsed again for its reason only.
    // from_json keeps a member name that appears twice as two entries (element_at would read the
    // first); rebuilt under the session's LAST_WIN policy, the name keeps its first place and its
    // last value, as on the other engines (decision 0202).
    await db.run(`CACHE TABLE ${q(objects)} AS SELECT line, raw,
        CASE WHEN size(m) = size(array_distinct(map_keys(m))) THEN m ELSE map_from_arrays(map_keys(m), map_values(m)) END AS m
      FROM (SELECT line, raw, from_json(raw, 'MAP<STRING,VARIANT>') AS m FROM ${q(lines)})`);
    // How many records, then the columns in order of first appearance: by line, then by place in
    // the record (one query: the file's views go with it).
    const place = `STRUCT<l: BIGINT, p: INT>`;
    const found = await db.query(
      `SELECT k, n FROM (
         SELECT CAST(NULL AS STRING) AS k, count(*) AS n, CAST(NULL AS ${place}) AS o FROM ${q(lines)}
         UNION ALL
         SELECT k, CAST(NULL AS BIGINT), min(named_struct('l', line, 'p', pos)) FROM (SELECT line, posexplode(map_keys(m)) AS (pos, k) FROM ${q(objects)} WHERE m IS NOT NULL) GROUP BY k
       ) ORDER BY o ASC NULLS FIRST`,
    );
    records += Number(found[0]!.n);
    const keys = found.slice(1).map((r) => String(r.k));
    const numbered = !!file.numbered;
    const own = numbered ? new Set([LINE_COLUMN, RAW_COLUMN]) : new Set<string>();
    const names = keys.filter((k) => !own.has(k));
    checkSourceKeys(names, sparkDialect.nameKey, sparkDialect.nameProblem);
    for (const n of names) lexical.set(n, 'json');
    // A JSON null is a value of no value: SQL NULL, as a missing field is (and as DuckDB and
    // PostgreSQL stage it), never the text null.
    const value = (k: string) => {
      const v = `element_at(m, ${sparkString(k)})`;
      return `CASE WHEN is_variant_null(${v}) THEN NULL ELSE to_json(${v}) END`;
    };
    const line = numbered ? `CAST(variant_get(element_at(m, ${sparkString(LINE_COLUMN)}), '$', 'bigint') AS BIGINT)` : 'line';
    const raw = numbered ? `coalesce(variant_get(element_at(m, ${sparkString(RAW_COLUMN)}), '$', 'string'), raw)` : 'raw';
    parts.push({
      select: `SELECT ${names.map((n) => `${value(n)} AS ${q(n)}`).join(', ')}${names.length ? ', ' : ''}${label} AS ${q(FILE_COLUMN)}, ${line} AS ${q(LINE_COLUMN)}, ${raw} AS ${q(RAW_COLUMN)} FROM ${q(objects)} WHERE m IS NOT NULL`,
      columns: names.map((n) => ({ name: n, type: 'STRING' })),
      held: 'json',
    });
    rejectParts.push(`SELECT ${label}, line, CASE WHEN try_parse_json(raw) IS NULL THEN 'malformed JSON' ELSE 'not a JSON object' END, raw FROM ${q(objects)} WHERE m IS NULL`);
  }
  const columns = unionColumns(parts.map((p) => p.columns));
  const select = parts.length
    ? parts
        .map((p) => {
          const has = new Set(p.columns.map((c) => c.name));
          const inner = `(${p.select})`;
          const value = (c: ColumnInfo) => (lexical.get(c.name) === 'json' && p.held !== 'json' ? `${asJson(q(c.name), p.held)} AS ${q(c.name)}` : q(c.name));
          return `SELECT ${columns.map((c) => (has.has(c.name) ? value(c) : `CAST(NULL AS ${c.type}) AS ${q(c.name)}`)).join(', ')}${columns.length ? ', ' : ''}${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, ${q(RAW_COLUMN)} FROM ${inner}`;
        })
        .join('\nUNION ALL\n')
    : `SELECT CAST(NULL AS STRING) AS ${q(FILE_COLUMN)}, CAST(NULL AS BIGINT) AS ${q(LINE_COLUMN)}, CAST(NULL AS STRING) AS ${q(RAW_COLUMN)} WHERE false`;
  await db.run(`CACHE TABLE ${q(table)} AS ${select}`);
  const empty = `SELECT CAST(NULL AS STRING) AS ${q(FILE_COLUMN)}, CAST(NULL AS BIGINT) AS ${q(LINE_COLUMN)}, CAST(NULL AS STRING) AS reason, CAST(NULL AS STRING) AS raw WHERE false`;
  await db.run(`CACHE TABLE ${q(rejects)} AS ${[empty, ...rejectParts.map((r) => `SELECT * FROM (${r}) x`)].join('\nUNION ALL\n')}`);
  return {
    lexical,
    records,
    columns: [...columns, { name: FILE_COLUMN, type: 'STRING' }, { name: LINE_COLUMN, type: 'BIGINT' }, { name: RAW_COLUMN, type: 'STRING' }],
  };
}

/**
 * A value of a file that does not hold JSON, in a column another file of the commit holds as JSON
 * (as DuckDB and PostgreSQL stage it): a CSV's text that spells a JSON number or boolean is that
 * value, any other text a JSON string; a Parquet value its JSON text. NULL stays NULL.
 */
function asJson(v: string, held: Lexical | 'typed'): string {
  const text = held === 'text' ? `CASE WHEN ${v} RLIKE '^${JSON_NUMBER}$' OR ${v} IN ('true', 'false') THEN ${v} ELSE ${sparkDialect.toJson(v)} END` : sparkDialect.toJson(v);
  return `CASE WHEN ${v} IS NULL THEN NULL ELSE ${text} END`;
}

/** The columns of several files, in order of first appearance; a column typed differently by two Parquet files keeps the first type. */
function unionColumns(lists: ColumnInfo[][]): ColumnInfo[] {
  const out = new Map<string, ColumnInfo>();
  for (const list of lists) for (const c of list) if (!out.has(c.name)) out.set(c.name, c);
  return [...out.values()];
}
