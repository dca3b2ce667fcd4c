import path from 'node:path';
import type { FlowStatus } from '../query/status.js';
import type { CommitResult } from '../store/commits.js';
import { plural, renderTable } from './print.js';

/** The widest line of `scd log`'s terminal view. */
export const LOG_WIDTH = 100;

/**
 * The commit log for a person: one line a commit, at most LOG_WIDTH columns. The counts a commit
 * is read by (rows read = applied + duplicates + quarantined; rows inserted, updated, deleted),
 * the time to the minute in UTC (`--json` has it to the millisecond; seconds would leave the
 * inputs too little of the width), and the inputs last (file names; cut with "…" to fit).
 */
export function logView(commits: CommitResult[]): string {
  // A Delta target's commits show the target's Delta version after each (its time travel).
  const delta = commits.some((c) => c.deltaVersion !== undefined);
  const columns = ['commit', ...(delta ? ['delta'] : []), 'at (UTC)', 'op', 'read', 'applied', 'dup', 'quar', 'keys', 'add', 'chg', 'rem', 'cls', 'inputs'];
  const rows = commits.map((c) => ({
    commit: c.version,
    delta: c.deltaVersion ?? '',
    'at (UTC)': c.committedAt.replace('T', ' ').slice(0, 16),
    op: c.operation,
    read: c.rowsRead,
    applied: c.eventsApplied,
    dup: c.duplicates,
    quar: c.quarantined,
    keys: c.keysChanged,
    // Versions added, changed, removed, closed (docs/SEMANTICS.md §5), abbreviated to fit.
    add: c.versionsAdded,
    chg: c.versionsChanged,
    rem: c.versionsRemoved,
    cls: c.versionsClosed,
    inputs: inputsText(c.inputs),
  }));
  return renderTable(columns, rows)
    .split('\n')
    .map((line) => (line.length <= LOG_WIDTH ? line : /^[- ]+$/.test(line) ? line.slice(0, LOG_WIDTH) : `${line.slice(0, LOG_WIDTH - 1)}…`))
    .join('\n');
}

function inputsText(inputs: string[]): string {
  if (!inputs.length) return '';
  const first = path.basename(inputs[0]!);
  return inputs.length === 1 ? first : `${first} +${inputs.length - 1}`;
}

/** The commit log as CSV: the CommitResult's fields as columns, inputs and expectations as JSON text. */
export function commitsCsv(commits: CommitResult[]): string {
  const fields: Array<keyof CommitResult> = [
    'version',
    'operation',
    'committedAt',
    'inputs',
    'rowsRead',
    'eventsApplied',
    'duplicates',
    'ties',
    'quarantined',
    'dropped',
    'skipped',
    'expectations',
    'keysChanged',
    'versionsAdded',
    'versionsChanged',
    'versionsRemoved',
    'versionsClosed',
    'durationMs',
    ...(commits.some((c) => c.deltaVersion !== undefined) ? (['deltaVersion'] as const) : []),
  ];
  const field = (v: unknown) => {
    if (v === undefined) return '';
    const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [fields.join(','), ...commits.map((c) => fields.map((f) => field(c[f])).join(','))].join('\n') + '\n';
}

/**
 * What a commit changed, in the words docs/SEMANTICS.md §5 defines: keys changed, then versions
 * added, closed, changed and removed.
 */
export function changeText(c: CommitResult): string {
  return `${plural(c.keysChanged, 'key')} changed: ${plural(c.versionsAdded, 'version')} added, ${c.versionsClosed} closed, ${c.versionsChanged} changed, ${c.versionsRemoved} removed`;
}

/** `scd status` for a person: one screen. */
export function statusText(s: FlowStatus): string {
  const n = (v: number) => v.toLocaleString('en-US');
  const c = s.lastCommit;
  const lines: Array<[string, string]> = [
    ['target', `${s.target} (${s.storedAs})`],
    ['engine', `${s.engine} · ${s.database}`],
  ];
  if (!s.applied) lines.push(['state', 'nothing applied yet (run `scd apply`)']);
  else
    lines.push(
      ['rows', n(s.rows)],
      ['keys', `${n(s.distinctKeys)} (${s.keys.join(', ')})`],
      ['current rows', n(s.currentRows)],
      [
        'last commit',
        c
          ? `${c.version} of ${n(s.commits)}: ${c.operation} at ${c.committedAt.replace(/\.\d+Z$/, 'Z')}, read ${plural(c.rowsRead, 'row')}, ${plural(c.keysChanged, 'key')} changed`
          : 'none',
      ],
    );
  lines.push(['pending files', s.pendingFiles === undefined ? '(the source is not a folder)' : `${n(s.pendingFiles)}${s.pendingFiles ? ' (run `scd apply`)' : ''}`]);
  if (s.changedFiles?.length)
    lines.push([
      'changed files',
      `${n(s.changedFiles.length)}: ${s.changedFiles.join(', ')}, changed after ${s.changedFiles.length === 1 ? 'it was' : 'they were'} applied; never applied again (put new changes in a new file)`,
    ]);
  if (s.applied) lines.push(['quarantined', `${n(s.quarantined)}${s.quarantined ? ' (see `scd quarantine`)' : ''}`], ['event log', plural(s.events, 'event')]);
  const width = Math.max(...lines.map(([k]) => k.length));
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n';
}
