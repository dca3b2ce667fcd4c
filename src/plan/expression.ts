import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';

/**
 * A flow expression (applyAsDeletes, applyAsTruncates) must be ONE SQL expression: no statement
 * separator, no comment, no top-level comma, balanced parentheses. Checked before any SQL runs,
 * so that wrapping it in parentheses can never change the statement around it.
 */
export function checkSingleExpression(flow: Flow, field: string, expr: string): void {
  const fail = (why: string) => {
    throw new ScdError('FLOW_INVALID', `"${expr}" is not a single boolean expression: ${why}`, {
      file: flow.origin,
      field,
      fix: `write one condition over the source columns, e.g. op = 'DELETE'`,
    });
  };
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i]!;
    if (ch === "'" || ch === '"') {
      const end = closingQuote(expr, i, ch);
      if (end < 0) fail(`unclosed ${ch === "'" ? 'string' : 'quoted name'}`);
      i = end;
      continue;
    }
    if (ch === ';') fail('it contains ";"');
    if ((ch === '-' && expr[i + 1] === '-') || (ch === '/' && expr[i + 1] === '*')) fail('it contains a comment');
    if (ch === '(') depth++;
    if (ch === ')' && --depth < 0) fail('unbalanced ")"');
    if (ch === ',' && depth === 0) fail('it is a list, not one expression');
  }
  if (depth !== 0) fail('unbalanced "("');
  if (/^\s*select\b/i.test(expr)) fail('it is a query; give a condition');
}

function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) i++;
      else return i;
    }
  }
  return -1;
}
