import { ScdError } from '../errors.js';

/**
 * scdkit's own columns start with this (in staged tables, scratch relations, the event log, the
 * change feed); a source column may not. The one definition: every layer that names one imports it.
 */
export const INTERNAL_COLUMN_PREFIX = '__scd_';

/**
 * Refuse source column names that would collide in a staged table: one under scdkit's own prefix,
 * or two that the engine takes as one name (`nameKey`: Dialect.nameKey; DuckDB ignores case,
 * PostgreSQL tells "Name" from "name"); and a name the engine cannot keep as written
 * (`nameProblem`: Dialect.nameProblem; PostgreSQL would cut it at 63 bytes), before any table has it.
 */
export function checkSourceKeys(keys: string[], nameKey: (name: string) => string, nameProblem: (name: string) => string | undefined): void {
  const seen = new Map<string, string>();
  for (const k of keys) {
    const problem = nameProblem(k);
    if (problem)
      throw new ScdError('SOURCE_INVALID', `source column ${JSON.stringify(k)} ${problem}; nothing was applied`, {
        fix: 'rename it in the source',
      });
    if (k.toLowerCase().startsWith(INTERNAL_COLUMN_PREFIX))
      throw new ScdError('SOURCE_INVALID', `source column "${k}" uses the reserved prefix ${INTERNAL_COLUMN_PREFIX}`, {
        fix: 'rename it in the source (scdkit keeps its own columns under that prefix)',
      });
    const other = seen.get(nameKey(k));
    if (other !== undefined)
      throw new ScdError('SOURCE_INVALID', `source columns "${other}" and "${k}" differ only in case, and column names ignore case`, {
        fix: 'rename one of them in the source',
      });
    seen.set(nameKey(k), k);
  }
}
