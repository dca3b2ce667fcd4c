import type { Dialect } from '../dialects/dialect.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { type StoreNames, storeNames } from '../store/names.js';

/**
 * Names the engine cannot keep as written (Dialect.nameProblem: PostgreSQL cuts a name at 63
 * bytes, so two long names become one; Delta refuses a space in a column name; no engine keeps a
 * NUL), refused before anything is read or written: otherwise the engine keeps a shorter name
 * silently, or stops the commit halfway in its own words ("already exists").
 */
export function checkFlowNames(flow: Flow, d: Dialect): void {
  const names = storeNames(flow.target);
  const bytes = (name: string) => Buffer.byteLength(name, 'utf8');
  for (const role of TABLE_ROLES) {
    const table = names[role];
    const problem = d.nameProblem(table);
    if (!problem) continue;
    // A name too long for the engine: the longest target name each table's name has room for.
    const room = Math.min(...TABLE_ROLES.map((r) => longestKept(d, bytes(names[r])) - (bytes(names[r]) - bytes(flow.target))));
    const whose =
      role === 'target' ? `target ${JSON.stringify(flow.target)}` : `target ${JSON.stringify(flow.target)}: the name of its ${TABLE_WORDS[role]}, ${JSON.stringify(table)},`;
    throw new ScdError('FLOW_INVALID', `${whose} ${problem}; nothing was applied`, {
      file: flow.origin,
      field: 'target',
      fix:
        room < bytes(flow.target)
          ? `give the flow a target name of at most ${room} bytes (scdkit names its tables after it, up to ${bytes(names.quarantine) - bytes(flow.target)} bytes longer)`
          : 'give the flow another target name',
    });
  }
  for (const [field, column] of flowColumns(flow)) {
    const problem = d.nameProblem(column);
    if (problem)
      throw new ScdError('FLOW_INVALID', `the column name ${JSON.stringify(column)} ${problem}; nothing was applied`, {
        file: flow.origin,
        field,
        fix:
          field === 'keys' || field === 'sequenceBy' || field.startsWith('columns') || field.startsWith('except') || field.startsWith('trackHistory')
            ? 'rename the column in the source and in the flow'
            : `give ${field} another name`,
      });
  }
}

/** The tables a target has of its own, longest name last (store/names.ts). */
const TABLE_ROLES = ['target', 'current', 'events', 'changes', 'state', 'quarantine'] as const satisfies ReadonlyArray<keyof StoreNames>;
const TABLE_WORDS: Record<(typeof TABLE_ROLES)[number], string> = {
  target: 'table',
  current: 'view of current rows',
  events: 'event log',
  changes: 'change feed',
  state: 'key state',
  quarantine: 'quarantine',
};

/** The longest name of plain letters, at most `bytes` long, that the engine keeps whole. */
function longestKept(d: Dialect, bytes: number): number {
  let n = bytes;
  while (n > 0 && d.nameProblem('x'.repeat(n))) n--;
  return n;
}

/** Each column name the flow gives, with the field that gives it. */
function flowColumns(flow: Flow): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (field: string, names: readonly string[] | undefined) => {
    for (const n of names ?? []) out.push([field, n]);
  };
  add('keys', flow.keys);
  if (flow.sequenceBy !== 'debezium') add('sequenceBy', flow.sequenceBy);
  add('columns', flow.columns);
  add('exceptColumns', flow.exceptColumns);
  add('trackHistory', flow.trackHistory);
  add('trackHistoryExcept', flow.trackHistoryExcept);
  add('previousValues', Object.entries(flow.previousValues ?? {}).flat());
  add('startAtColumn', [flow.startAtColumn]);
  add('endAtColumn', [flow.endAtColumn]);
  if (flow.isCurrentColumn) add('isCurrentColumn', [flow.isCurrentColumn]);
  if (flow.surrogateKey) add('surrogateKey', [flow.surrogateKey]);
  add('deletedColumn', [flow.deletedColumn]);
  if (flow.processingTime) add('processingColumn', [flow.processingColumn]);
  return out;
}
