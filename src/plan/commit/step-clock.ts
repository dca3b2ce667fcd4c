import type { CommitStep } from '../../store/commits.js';

/**
 * Times a commit's steps as they run, for `scd apply --profile` and the result's `steps`. A step's
 * time is its wall time on this side: an engine that defers statements (Spark sends a scratch view
 * with the next statement that needs the server) bills them to the step that sends them.
 */
export class StepClock {
  readonly steps: CommitStep[] = [];

  async time<T>(step: string, run: () => Promise<T>, rows?: (out: T) => number): Promise<T> {
    const started = performance.now();
    const out = await run();
    this.steps.push({ step, ms: Math.round(performance.now() - started), ...(rows && { rows: rows(out) }) });
    return out;
  }
}
