import { tmpdir } from 'node:os';

/**
 * A statement as the golden files and the fixtures spell it: whitespace runs made one space, and
 * what differs from one run to the next made a fixed name, so that a recording answers a later run
 * and a golden file changes only when the SQL does:
 * - a temporary folder (applyRows writes its records to one): `<tmp>`;
 * - a test's fresh schema (test/engines.ts freshSchema): `scd_golden`;
 * - a UUID (Spark's lease holder): `<uuid>`;
 * - the process a Spark lease names (host, pid, its namespace, its command): `<process>`.
 * None of them occurs in the SQL of the DuckDB and PostgreSQL golden files: those pass them as
 * parameters, or not at all.
 */
export function statementText(sql: string): string {
  return volatileNamesOut(sql.replace(/\s+/g, ' ').trim());
}

/** A parameter or any other text with the run's own names made fixed (as statementText, without the spacing). */
export function volatileNamesOut(text: string): string {
  return text
    .replace(TEMP_FOLDER, '<tmp>')
    .replace(FRESH_SCHEMA, 'scd_golden')
    .replace(UUID, '<uuid>')
    .replace(LEASE_PROCESS, "'<process>' AS host, CAST(0 AS INT) AS pid, '<process>' AS pid_space, '<process>' AS command");
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The first folder below the system's temporary folder: one made by mkdtemp, named at random. */
const TEMP_FOLDER = new RegExp(`${escaped(tmpdir())}/[^/'"\\s,)]+`, 'g');
const FRESH_SCHEMA = /\bscd_test_\d+_[0-9a-z]+_\d+\b/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
/** A Spark string literal: quotes doubled or backslash-escaped inside. */
const LITERAL = String.raw`'(?:[^'\\]|\\.|'')*'`;
const LEASE_PROCESS = new RegExp(`${LITERAL} AS host, CAST\\(\\d+ AS INT\\) AS pid, ${LITERAL} AS pid_space, ${LITERAL} AS command`, 'g');
