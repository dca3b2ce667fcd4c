/**
 * Flow expressions (applyAsDeletes, applyAsTruncates, expect.*.sql) as the drivers see them: how
 * one enters SQL, and why an engine refuses one (Driver.checkExpression).
 *
 * The contract: ONE boolean expression over the source record's columns, a function of that
 * record alone. No subquery, no table or file function, no aggregate or window function, no
 * parameter, no function whose result its arguments do not decide (now(), random(),
 * pg_read_file()). The engine's own parser and binder decide it, never a scan of the text.
 */

/** Why an engine refuses a flow expression; the plan turns it into one FLOW_INVALID line. */
export type ExpressionProblem =
  /** The engine's parser does not read it as one expression. */
  | { kind: 'syntax'; reason: string }
  /** It reads or does more than the record's own values. */
  | { kind: 'reads'; reason: string }
  /** It names a column or function the record does not have, or its types do not fit. */
  | { kind: 'unbound'; reason: string }
  /** One expression over the record, but not a boolean. */
  | { kind: 'type'; type: string };

/**
 * The one way a flow expression enters SQL: in parentheses, the closing one on a line of its own.
 * Drivers parse exactly this text when they check an expression, and the plan splices exactly
 * this text, so what the engine accepted is what runs; a trailing `--` comment cannot swallow the
 * SQL that follows it. Spliced only where a whole operand stands (between `(` or `,` and `,`,
 * `)` or `AS`), so an expression's own operators never bind to the SQL around it.
 */
export function spliced(expr: string): string {
  return `(${expr}\n)`;
}
