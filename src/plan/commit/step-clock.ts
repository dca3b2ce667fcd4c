import type { CommitStep } from '../../store/commits.js';

/**
 * Times a commit's steps as they run, for `scd apply --profile` and the result's `steps`. A step's
 * time is its wall time on this side: an engine that defers statements (Spark sends a scratch view
 * with the next statement that needs the server) bills them to the step that sends them.
 */
export class StepClock {
  readonly steps: CommitStep[] = [];

  /** Run `step`; `rows`: how many rows it produced, as a count its output holds or a function of it. */
  async time<T>(step: string, run: () => Promise<T>, rows?: CountOf<T> | ((out: T) => number)): Promise<T> {
    const started = performance.now();
    const out = await run();
    const count = typeof rows === 'function' ? rows(out) : rows === undefined || out == null ? undefined : (out[rows] as number | undefined);
    this.steps.push({ step, ms: Math.round(performance.now() - started), ...(count !== undefined && { rows: count }) });
    return out;
  }
}

/** The names of a step's output fields that hold a count. */
type CountOf<T> = { [K in keyof NonNullable<T>]-?: NonNullable<T>[K] extends number | undefined ? K : never }[keyof NonNullable<T>];
