import type { Dialect } from '../dialects/dialect.js';
import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { CDF_COLUMNS } from '../store/feed.js';
import { type StoreNames, storeNames } from '../store/names.js';
import { type ColumnModel, reservedNames } from './model.js';
import { targetColumns } from './target.js';

/**
 * Names that would meet in one place, refused before any table is created or altered
 * (docs/decisions/0037-names-that-would-meet-are-refused.md): otherwise the engine stops the
 * commit halfway, in its own words ("already exists").
 * Names meet as the engine compares them (Dialect.nameKey: DuckDB ignores case).
 */

/** The flow fields that name a column scdkit adds to the target (model.ts reservedNames). */
const ADDED_FIELDS = ['startAtColumn', 'endAtColumn', 'isCurrentColumn', 'surrogateKey', 'deletedColumn'] as const;

/**
 * The columns of the tables a flow writes: the event log holds every source column, the target
 * its data columns and the ones scdkit adds, the change feed the target's and its own.
 */
export function checkColumnNames(flow: Flow, model: ColumnModel, d: Dialect): void {
  const engine = d.name === 'duckdb' ? 'DuckDB, which ignores case in names' : d.name;
  // A table source's columns are not staged from files, where their names are checked first.
  for (const c of model.source) {
    const problem = d.nameProblem(c.name);
    if (problem)
      throw new ScdError('SOURCE_INVALID', `source column ${JSON.stringify(c.name)} ${problem}; nothing was applied`, {
        file: flow.origin,
        fix: 'rename it in the source',
      });
  }
  const twice = firstClash(
    model.source.map((c) => c.name),
    d,
  );
  if (twice)
    throw new ScdError('SOURCE_INVALID', `source columns "${twice[0]}" and "${twice[1]}" are one column to ${engine}`, {
      file: flow.origin,
      fix: 'rename one of them in the source',
    });
  const added = new Set(reservedNames(flow));
  const target = targetColumns(flow, model, d).map((c) => c.name);
  const pair = firstClash(target, d);
  if (pair) {
    const [ours, theirs] = added.has(pair[0]) ? [pair[0], pair[1]] : [pair[1], pair[0]];
    throw new ScdError('FLOW_INVALID', `source column "${theirs}" and the column scdkit adds, "${ours}", are one name to ${engine}`, {
      file: flow.origin,
      field: addedField(flow, ours),
      fix: `rename the added column (${addedField(flow, ours) ?? 'startAtColumn, endAtColumn, ...'}) or except the source column`,
    });
  }
  const feed = new Map(CDF_COLUMNS.map((c) => [d.nameKey(c), c]));
  const named = target.find((c) => feed.has(d.nameKey(c)));
  if (named) {
    const field = added.has(named) ? addedField(flow, named) : undefined;
    throw new ScdError('FLOW_INVALID', `column "${named}" has the name of a column the change feed adds (${CDF_COLUMNS.join(', ')})`, {
      file: flow.origin,
      field,
      fix: field ? `give ${field} another name` : `rename it in the source, or leave it out of the target (exceptColumns)`,
    });
  }
}

/** The first two names of `names` that are one to the engine. */
function firstClash(names: string[], d: Dialect): [string, string] | undefined {
  const seen = new Map<string, string>();
  for (const n of names) {
    const other = seen.get(d.nameKey(n));
    if (other !== undefined) return [other, n];
    seen.set(d.nameKey(n), n);
  }
  return undefined;
}

function addedField(flow: Flow, column: string): string | undefined {
  return ADDED_FIELDS.find((f) => flow[f] === column);
}

/** What each of a target's tables is, for messages. */
const ROLES: Record<Exclude<keyof StoreNames, 'writes'>, string> = {
  target: 'table',
  current: 'view of current rows',
  events: 'event log',
  quarantine: 'quarantine',
  changes: 'change feed',
  commits: 'commit log',
  flows: 'flow catalog',
  files: 'landing file log',
  watermarks: 'watermarks',
  state: 'key state',
};

/** The tables that are a target's own (the catalog's are shared by every target). */
const OWN: Array<keyof typeof ROLES> = ['target', 'current', 'events', 'quarantine', 'changes', 'state'];

/**
 * A target about to be created: none of the names its tables need may be taken in the database,
 * by another target's table (`dim` and `DIM` on DuckDB; `x_current`, the view of target `x`) or
 * by a table that is not scdkit's.
 */
export async function checkNewTarget(driver: Driver, flow: Flow, names: StoreNames): Promise<void> {
  const d = driver.dialect;
  const targets = (await driver.query(`SELECT target FROM ${d.quote(names.flows)}`)).map((r) => String(r.target));
  const taken = new Map((await driver.tables()).map((t) => [d.nameKey(t.name), t]));
  // Whose each taken name is, where it is another target's.
  const owners = new Map<string, string>();
  for (const t of targets) {
    const theirs = storeNames(t);
    for (const role of Object.keys(ROLES) as Array<keyof typeof ROLES>)
      owners.set(d.nameKey(theirs[role]), role === 'target' ? `target "${t}"` : OWN.includes(role) ? `target "${t}"'s ${ROLES[role]}` : `scdkit's ${ROLES[role]}`);
  }
  for (const role of OWN) {
    const wanted = names[role];
    const held = taken.get(d.nameKey(wanted));
    if (!held) continue;
    const owner = owners.get(d.nameKey(wanted)) ?? `a ${held.view ? 'view' : 'table'} that is not scdkit's`;
    const sameName = held.name === wanted ? '' : ` (${held.name}: ${d.name === 'duckdb' ? 'DuckDB ignores case in names' : 'the same name to the engine'})`;
    const fix = !owners.has(d.nameKey(wanted))
      ? 'give the flow another target, or rename or drop that table'
      : role === 'target' && sameName
        ? `write target: ${held.name} to apply to that target, or give the flow another target`
        : 'give the flow another target';
    throw new ScdError('FLOW_INVALID', `target "${flow.target}" needs the name ${wanted} for its ${ROLES[role]}, and ${owner} has it${sameName}; nothing was applied`, {
      file: flow.origin,
      field: 'target',
      fix,
    });
  }
}
