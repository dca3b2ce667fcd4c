import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { type ExpressionProblem, spliced } from '../dialects/expression.js';
import { isDivisionByZero, isValueError } from '../dialects/value-errors.js';
import { QueryError, ScdError } from '../errors.js';
import { shown } from '../plan/expression.js';
import { spellingProblem } from '../plan/expression-spelling.js';

/**
 * A person's row filter (`scd export --where`) as SQL the query may splice: the same contract and
 * the same two checks as a flow's expressions (plan/expression.ts): ONE boolean expression over
 * the target's columns, no subquery, table, file, aggregate, window or volatile function, in the
 * spelling both engines read alike; the engine's own parser and binder decide. Anything else is
 * refused in one line, before any statement holds it.
 */
export async function checkedWhere(driver: Driver, expr: string, columns: ColumnInfo[]): Promise<string> {
  if (!expr.trim()) throw refusal(expr, { kind: 'syntax', reason: 'it is empty' });
  const spelling = spellingProblem(expr);
  if (spelling) throw refusal(expr, { kind: 'syntax', reason: spelling });
  if (typeof (driver as Partial<Driver>).checkExpression !== 'function')
    throw new ScdError('USAGE', `the ${driver.dialect.name} engine cannot check a --where expression, so it runs none`, { fix: 'drop --where' });
  const problem = await driver.checkExpression(expr, columns);
  if (problem) throw refusal(expr, problem);
  return spliced(expr);
}

function refusal(expr: string, p: ExpressionProblem): ScdError {
  const one = (s: string) => s.replace(/[\r\n]+/g, ' ');
  const example = 'e.g. --where "tier = \'gold\'"';
  switch (p.kind) {
    case 'syntax':
      return new ScdError('USAGE', `--where ${shown(expr)} is not a single boolean expression: ${one(p.reason)}`, {
        fix: `write one condition over the target's columns, ${example}`,
      });
    case 'reads':
      return new ScdError('USAGE', `--where ${shown(expr)} reads more than the target's row: ${one(p.reason)}`, {
        fix: `use only the target's columns, constants and functions of them (no subquery, table, file or volatile function), ${example}`,
      });
    case 'unbound':
      return new ScdError('USAGE', `--where ${shown(expr)} cannot be evaluated on the target: ${one(p.reason)}`, {
        fix: `use the target's column names (see \`scd export --format csv | head -1\`), ${example}`,
      });
    case 'type':
      return new ScdError('USAGE', `--where ${shown(expr)} is not a boolean expression (it gives ${p.type})`, { fix: `compare it, ${example}` });
  }
}

/**
 * The engine's refusal of a query that holds a person's --where, when it is theirs: checkedWhere
 * let the expression through (it binds, and is boolean), so a value it cannot take as it runs
 * (`amount > 'abc'`: 'abc' is no number) is its problem, told in one line naming it. Anything
 * else (undefined) stays the error it is.
 */
export function whereRefusal(e: unknown, expr: string): ScdError | undefined {
  if (!(e instanceof QueryError) || !isValueError(e)) return undefined;
  return new ScdError('USAGE', `--where ${shown(expr)} failed on the target's rows: ${e.reason.replace(/[\r\n]+/g, ' ')}`, {
    fix: isDivisionByZero(e)
      ? 'guard the division, e.g. --where "d <> 0 AND 100 / d > 1"'
      : 'compare each column with a value of its type, e.g. --where "amount > 100" or --where "tier = \'gold\'"',
    cause: e,
  });
}
