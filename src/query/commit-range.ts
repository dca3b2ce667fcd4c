import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { readCommitLog } from './commit-log.js';

/** The commits `scd changes` reads: versions, or the times they were committed at (Delta's startingTimestamp/endingTimestamp). */
export interface CommitBounds {
  fromVersion?: number;
  toVersion?: number;
  /** The first commit committed at or after this time. */
  fromTimestamp?: string;
  /** The last commit committed at or before this time. */
  toTimestamp?: string;
}

/**
 * The inclusive range of commits the bounds name, checked against the log: from defaults to the
 * first commit, to to the latest; a range that is inverted, names a commit beyond the latest, or
 * holds no commit is refused in one line that says which commits there are.
 */
export async function commitRange(driver: Driver, flow: Flow, bounds: CommitBounds): Promise<{ from: number; to: number }> {
  if (bounds.fromVersion !== undefined && bounds.fromTimestamp !== undefined)
    throw new ScdError('USAGE', 'give --from-version or --from-timestamp, not both', { fix: 'drop one of them' });
  if (bounds.toVersion !== undefined && bounds.toTimestamp !== undefined) throw new ScdError('USAGE', 'give --to-version or --to-timestamp, not both', { fix: 'drop one of them' });
  const log = (await readCommitLog(driver, flow, undefined, { engineVersions: false })).reverse(); // oldest first
  const latest = log.length ? log[log.length - 1]!.version : 0;
  const first = log.length ? log[0]!.version : 0;
  const span = latest ? `commits are ${first}..${latest}, committed ${shortTime(log[0]!.committedAt)} .. ${shortTime(log[log.length - 1]!.committedAt)}` : 'there is no commit yet';
  if (!latest) throw new ScdError('NOT_APPLIED', `target "${flow.target}" has no commit yet`, { file: flow.origin, fix: 'run `scd apply` first' });
  for (const [flag, v] of [
    ['--from-version', bounds.fromVersion],
    ['--to-version', bounds.toVersion],
  ] as const)
    if (v !== undefined && v > latest) throw new ScdError('USAGE', `${flag} ${v} is beyond the last commit (${span})`, { fix: `use ${flag} ${first}..${latest}` });
  let from = bounds.fromVersion ?? first;
  let to = bounds.toVersion ?? latest;
  const fromT = bounds.fromTimestamp === undefined ? undefined : instant('--from-timestamp', bounds.fromTimestamp);
  const toT = bounds.toTimestamp === undefined ? undefined : instant('--to-timestamp', bounds.toTimestamp);
  if (fromT !== undefined && toT !== undefined && fromT > toT)
    throw new ScdError('USAGE', `the range is inverted: --from-timestamp ${bounds.fromTimestamp} is after --to-timestamp ${bounds.toTimestamp}`, {
      fix: 'give a start at or before the end',
    });
  if (fromT !== undefined) {
    const c = log.find((x) => Date.parse(x.committedAt) >= fromT);
    if (!c) throw new ScdError('USAGE', `no commit was made at or after --from-timestamp ${bounds.fromTimestamp} (${span})`, { fix: 'give an earlier time' });
    from = c.version;
  }
  if (toT !== undefined) {
    const c = [...log].reverse().find((x) => Date.parse(x.committedAt) <= toT);
    if (!c) throw new ScdError('USAGE', `no commit was made at or before --to-timestamp ${bounds.toTimestamp} (${span})`, { fix: 'give a later time' });
    to = c.version;
  }
  // Two times in order that find from > to: every commit is before the start or after the end.
  if (from > to && fromT !== undefined && toT !== undefined)
    throw new ScdError('USAGE', `no commit was made between ${bounds.fromTimestamp} and ${bounds.toTimestamp} (${span})`, { fix: 'widen the times' });
  if (from > to) throw new ScdError('USAGE', `the range is inverted: from commit ${from} to commit ${to} (${span})`, { fix: 'give a start at or before the end' });
  return { from, to };
}

/** A time a person gives: ISO-8601, a date alone, or without a zone (read as UTC). */
function instant(flag: string, text: string): number {
  const t = text.trim();
  const zoned = /(Z|[+-]\d{2}(:?\d{2})?)$/i.test(t) && /T|\s\d/.test(t);
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(t) ? `${t}T00:00:00Z` : zoned ? t.replace(' ', 'T') : `${t.replace(' ', 'T')}Z`;
  const ms = Date.parse(iso);
  if (!/^\d{4}-\d{2}-\d{2}/.test(t) || Number.isNaN(ms))
    throw new ScdError('USAGE', `${flag} ${text} is not a time`, { fix: `write e.g. ${flag} 2025-01-09T08:00:00Z (no zone: UTC)` });
  return ms;
}

function shortTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}
