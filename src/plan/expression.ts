import type { ColumnInfo, Driver } from '../dialects/driver.js';
import type { ExpressionProblem } from '../dialects/expression.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { spellingProblem } from './expression-spelling.js';

export { spliced } from '../dialects/expression.js';

/**
 * The flow's SQL expressions (applyAsDeletes, applyAsTruncates, expect.*.sql), each with its
 * field: each must be ONE boolean expression over the source record's columns
 * (dialects/expression.ts). Checked twice before any SQL holds one: its spelling before anything
 * runs (checkSpelling), the engine's verdict once the record's columns are known (checkExpressions).
 */
export function flowExpressions(flow: Flow): Array<[field: string, expr: string]> {
  const out: Array<[string, string]> = [];
  if (flow.applyAsDeletes) out.push(['applyAsDeletes', flow.applyAsDeletes]);
  if (flow.applyAsTruncates) out.push(['applyAsTruncates', flow.applyAsTruncates]);
  for (const [name, e] of Object.entries(flow.expect)) out.push([`expect.${name}.sql`, e.sql]);
  return out;
}

/** Every expression uses the spelling both engines read alike (expression-spelling.ts). */
export function checkSpelling(flow: Flow): void {
  for (const [field, expr] of flowExpressions(flow)) {
    const why = spellingProblem(expr);
    if (why) throw refusal(flow, field, expr, { kind: 'syntax', reason: why });
  }
}

/** The engine's verdict on every expression, over a record of `columns` (the model's source columns). */
export async function checkExpressions(driver: Driver, flow: Flow, columns: ColumnInfo[]): Promise<void> {
  const list = flowExpressions(flow);
  // Without the engine's verdict no expression runs: a driver without the hook is refused loudly.
  if (list.length && typeof (driver as Partial<Driver>).checkExpression !== 'function')
    throw new Error(`the ${driver.dialect.name} driver has no checkExpression(), so scdkit cannot tell whether a flow expression is one expression; it runs none`);
  for (const [field, expr] of list) {
    const problem = await driver.checkExpression(expr, columns);
    if (problem) throw refusal(flow, field, expr, problem);
  }
}

/** An expression as a message shows it: on one line, whatever it holds. */
export function shown(expr: string): string {
  return `"${expr.replace(/[\s\p{Cc}]+/gu, ' ')}"`;
}

function refusal(flow: Flow, field: string, expr: string, p: ExpressionProblem): ScdError {
  const at = { file: flow.origin, field };
  const one = (s: string) => s.replace(/[\r\n]+/g, ' ');
  switch (p.kind) {
    case 'syntax':
      return new ScdError('FLOW_INVALID', `${shown(expr)} is not a single boolean expression: ${one(p.reason)}`, {
        ...at,
        fix: `write one condition over the source columns, e.g. op = 'DELETE'`,
      });
    case 'reads':
      return new ScdError('FLOW_INVALID', `${shown(expr)} is not a single boolean expression over the record: ${one(p.reason)}`, {
        ...at,
        fix: `use only the record's columns, constants and functions of them (no subquery, table, file or volatile function), e.g. op = 'DELETE'`,
      });
    case 'unbound':
      return new ScdError('FLOW_INVALID', `${shown(expr)} cannot be evaluated on the source: ${one(p.reason)}`, {
        ...at,
        fix: "use the source column names, e.g. op = 'DELETE'",
      });
    case 'type':
      return new ScdError('FLOW_INVALID', `${shown(expr)} is not a boolean expression (it gives ${p.type})`, {
        ...at,
        fix: `compare it, e.g. ${one(expr)} = 'DELETE'`,
      });
  }
}
