/**
 * Spark SQL scripts (`BEGIN s1; s2; …; END`, Spark ≥ 4.0): several statements in one round trip,
 * run in order, answered with the last statement's rows. A commit's scratch (cached and plain
 * temporary views) waits in the driver and goes with the next statement that needs the server, so
 * a commit's round trips follow its queries and writes, not its intermediate steps.
 *
 * What a script cannot hold, found on Spark 4.2: `SET key = value` and `RESET` of a session
 * setting (the script's SET is a variable's), and an answer that is not a query's rows (DESCRIBE,
 * SHOW and EXPLAIN answer nothing in a script). A statement that fails ends the script: the ones
 * before it ran.
 */

/** Whether a statement only makes a temporary view (and may wait for the next statement). */
export function deferrable(sql: string): boolean {
  return /^\s*(?:CACHE\s+(?:LAZY\s+)?TABLE|CREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+VIEW|ALTER\s+VIEW\s+\S+\s+RENAME\s+TO)\b/i.test(sql);
}

/** Whether a statement may end a script: not a session setting, and its answer is a query's rows or none. */
export function scriptable(sql: string): boolean {
  return !/^\s*(?:SET|RESET|DESCRIBE|DESC|SHOW|EXPLAIN|USE)\b/i.test(sql);
}

/** One script of the statements, in order. */
export function sqlScript(statements: string[]): string {
  return `BEGIN\n${statements.map((s) => `${s.trim().replace(/;\s*$/, '')};`).join('\n')}\nEND`;
}
