/**
 * Errors in two tiers:
 * - ScdError: something a person can fix. One line: what is wrong, where, and the fix.
 * - QueryError: the engine refused a statement; keeps the SQL and parameters for debugging.
 */
export type ScdErrorCode =
  | 'FLOW_INVALID'
  | 'FLOW_NOT_FOUND'
  | 'SOURCE_INVALID'
  | 'INPUT_UNREADABLE'
  | 'SCHEMA_CHANGE'
  | 'DB_IN_USE'
  | 'DB_UNREACHABLE'
  | 'NOT_APPLIED'
  | 'USAGE';

export interface ScdErrorOptions {
  file?: string;
  field?: string;
  fix?: string;
  cause?: unknown;
}

export class ScdError extends Error {
  readonly code: ScdErrorCode;
  readonly file?: string;
  readonly field?: string;
  readonly fix?: string;

  constructor(code: ScdErrorCode, message: string, options: ScdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ScdError';
    this.code = code;
    this.file = options.file;
    this.field = options.field;
    this.fix = options.fix;
  }

  /** The one line shown to a person: `file: field: problem — fix`. */
  oneLine(): string {
    const where = [this.file, this.field ? `field "${this.field}"` : undefined].filter(Boolean).join(': ');
    const fix = this.fix ? ` (fix: ${this.fix})` : '';
    return `${where ? `${where}: ` : ''}${this.message}${fix}`;
  }
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
  return text.split('\n').find((l) => l.trim() !== '')?.trim() ?? text;
}
