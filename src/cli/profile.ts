import type { CommitStep } from '../store/commits.js';
import { renderTable } from './print.js';

/**
 * `scd apply --profile`: where a commit's time went, one line per step in the order they ran, with
 * each step's share of the whole and the rows it produced (empty where a step counts none).
 */
export function profileTable(version: number, steps: CommitStep[]): string {
  const total = steps.reduce((sum, s) => sum + s.ms, 0);
  const rows = steps.map((s) => ({
    step: s.step,
    ms: s.ms,
    share: total > 0 ? `${Math.round((100 * s.ms) / total)}%` : '',
    rows: s.rows ?? '',
  }));
  rows.push({ step: 'all steps', ms: total, share: '', rows: '' });
  return `commit ${version}, step by step:\n${renderTable(['step', 'ms', 'share', 'rows'], rows)}`;
}
