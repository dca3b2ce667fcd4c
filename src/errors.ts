/**
 * Errors in two tiers:
 * - ScdError: something a person can fix. One line: what is wrong, where, and the fix.
 * - QueryError: the engine refused a statement; keeps the SQL and parameters for debugging.
 */
export type ScdErrorCode = 'FLOW_INVALID' | 'FLOW_NOT_FOUND' | 'SOURCE_INVALID' | 'INPUT_UNREADABLE' | 'SCHEMA_CHANGE' | 'DB_IN_USE' | 'DB_UNREACHABLE' | 'NOT_APPLIED' | 'USAGE';

export interface ScdErrorOptions {
  file?: string;
  field?: string;
  fix?: string;
  cause?: unknown;
}

export class ScdError extends Error {
  readonly code: ScdErrorCode;
  /** What is wrong, alone: `message` without where and the fix. */
  readonly problem: string;
  readonly file?: string;
  readonly field?: string;
  readonly fix?: string;

  /**
   * `message` is the whole line a person reads (where, what is wrong, and the fix: "did you mean"
   * included), the same a library caller's `e.message` and the CLI print; `problem`, `file`,
   * `field` and `fix` are its parts.
   */
  constructor(code: ScdErrorCode, problem: string, options: ScdErrorOptions = {}) {
    super(lineOf(problem, options), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ScdError';
    this.code = code;
    this.problem = problem;
    this.file = options.file;
    this.field = options.field;
    this.fix = options.fix;
  }

  /** The one line shown to a person: `file: field: problem (fix: …)`, which is `message`. */
  oneLine(): string {
    return this.message;
  }
}

function lineOf(problem: string, { file, field, fix }: ScdErrorOptions): string {
  const where = [file, field ? `field "${field}"` : undefined].filter(Boolean).join(': ');
  return `${where ? `${where}: ` : ''}${problem}${fix ? ` (fix: ${fix})` : ''}`;
}

export class QueryError extends Error {
  readonly sql: string;
  readonly params: readonly unknown[];

  constructor(sql: string, params: readonly unknown[], cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`query failed: ${firstLine(reason)}`, { cause });
    this.name = 'QueryError';
    this.sql = sql;
    this.params = params;
  }

  /** The engine's own message, without the SQL echo some engines append. */
  get reason(): string {
    const c = this.cause;
    return firstLine(c instanceof Error ? c.message : String(c));
  }
}

export function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? text
  );
}
