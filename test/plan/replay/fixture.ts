import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { statementText, volatileNamesOut } from './statement-text.js';

/**
 * What one engine answered to the statements a driver sent it, in the order they were sent,
 * recorded once from the real engine (recording-*.ts) and answered again without it (replaying-*.ts).
 * Statements and parameters are kept as statementText spells them, so that a later run finds them.
 */
export interface Fixture {
  dialect: string;
  entries: FixtureEntry[];
}

/** One call of the engine's connection and what came of it: rows (or none), or the error it failed with. */
export interface FixtureEntry {
  /** The connection's method, or what a prepared statement was used for (DuckDB: run, read, stream). */
  call: string;
  sql: string;
  /** The parameters as JSON text (values that JSON lacks tagged, as encodeValue does). */
  params?: string;
  rows?: unknown[];
  /** PostgreSQL's result columns (name and type), which the driver reads beside the rows. */
  fields?: unknown[];
  /** What a COPY … TO wrote to its file. */
  file?: string;
  error?: { message: string; code?: string };
}

/** Values JSON has no spelling for, tagged so that they come back as they were. */
export function encodeValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return { $bigint: value.toString() };
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') };
  return value;
}

function decodeValue(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const tagged = value as Record<string, unknown>;
    if (typeof tagged.$bigint === 'string' && Object.keys(tagged).length === 1) return BigInt(tagged.$bigint);
    if (typeof tagged.$bytes === 'string' && Object.keys(tagged).length === 1) return new Uint8Array(Buffer.from(tagged.$bytes, 'base64'));
  }
  return value;
}

/** The parameters of a call as a fixture keeps them (undefined when there are none). */
export function paramsText(params: readonly unknown[] | undefined): string | undefined {
  return params?.length ? volatileNamesOut(JSON.stringify(params, encodeValue)) : undefined;
}

export function readFixture(file: string): Fixture {
  if (!existsSync(file)) throw new Error(`no fixture ${file}: record it (RECORD_FIXTURES=1, test/plan/golden-sql.test.ts says how)`);
  return JSON.parse(readFileSync(file, 'utf8'), decodeValue) as Fixture;
}

/** One entry a line: a change to what the engine answers shows as a diff of the entries it touches. */
export function writeFixture(file: string, fixture: Fixture): void {
  const lines = fixture.entries.map((e) => '    ' + JSON.stringify(e, encodeValue));
  writeFileSync(file, `{\n  "dialect": ${JSON.stringify(fixture.dialect)},\n  "entries": [\n${lines.join(',\n')}\n  ]\n}\n`);
}

/** The calls a recording made, in order. */
export class FixtureRecorder {
  readonly entries: FixtureEntry[] = [];

  /** A new entry for a call, filled in as its answer comes (a stream's rows arrive in chunks). */
  begin(call: string, sql: string, params?: readonly unknown[]): FixtureEntry {
    const entry: FixtureEntry = { call, sql: statementText(sql) };
    const p = paramsText(params);
    if (p !== undefined) entry.params = p;
    this.entries.push(entry);
    return entry;
  }

  /** A call that failed before it could be told apart (DuckDB: a statement it could not prepare). */
  failed(call: string, sql: string, error: unknown): void {
    this.begin(call, sql).error = errorOf(error);
  }

  /** Run `work` as the call `entry` records: its error is recorded (and thrown on). */
  async failing<T>(entry: FixtureEntry, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      entry.error = errorOf(e);
      throw e;
    }
  }
}

function errorOf(e: unknown): { message: string; code?: string } {
  const message = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? { message, code } : { message };
}

/**
 * A fixture's answers, taken in the order each call was recorded. A call the fixture lacks fails
 * at once, with the statement sent and the fixture's nearest one: the SQL changed, and the
 * fixture is to be recorded again.
 */
export class FixtureTape {
  private readonly answers = new Map<string, FixtureEntry[]>();
  /**
   * What the first call the fixture could not answer was, in full: a driver reports an engine's
   * error by its first line, and this is what a person needs to see.
   */
  firstMiss: string | undefined;

  constructor(
    private readonly fixture: Fixture,
    /** Where the fixture is, and how to record it again, for the message of a call it lacks. */
    private readonly origin: string,
  ) {
    for (const entry of fixture.entries) {
      const key = keyOf(entry.call, entry.sql, entry.params);
      const queue = this.answers.get(key) ?? [];
      queue.push(entry);
      this.answers.set(key, queue);
    }
  }

  /** Whether the fixture holds a call of `call` with this statement still to answer (DuckDB: a prepare that failed). */
  has(call: string, sql: string, params?: readonly unknown[]): boolean {
    return !!this.answers.get(keyOf(call, statementText(sql), paramsText(params)))?.length;
  }

  /** The recorded answer to this call; throws the recorded error, or, when there is none, says what differs. */
  answer(call: string, sql: string, params?: readonly unknown[]): FixtureEntry {
    const text = statementText(sql);
    const p = paramsText(params);
    const entry = this.answers.get(keyOf(call, text, p))?.shift();
    if (!entry) {
      const message = this.lacking(call, text, p);
      this.firstMiss ??= message;
      throw new Error(message);
    }
    if (entry.error) throw Object.assign(new Error(entry.error.message), entry.error.code === undefined ? {} : { code: entry.error.code });
    return entry;
  }

  private lacking(call: string, sql: string, params: string | undefined): string {
    const sent = `${call} ${sql}${params ? ` -- params ${params}` : ''}`;
    const recorded = this.fixture.entries.map((e) => `${e.call} ${e.sql}${e.params ? ` -- params ${e.params}` : ''}`);
    const known = recorded.includes(sent);
    let nearest = '';
    let common = -1;
    for (const r of recorded) {
      let n = 0;
      while (n < r.length && n < sent.length && r[n] === sent[n]) n++;
      if (n > common) [nearest, common] = [r, n];
    }
    const around = (s: string) => JSON.stringify(s.slice(Math.max(0, common - 40), common + 80));
    return [
      known
        ? `the plan sent this statement more often than the fixture ${this.origin} recorded it:`
        : `the plan sent a statement the fixture ${this.origin} lacks (the SQL changed: record the fixture again):`,
      `  sent:    ${sent}`,
      known ? '' : `  nearest: ${nearest}`,
      known ? '' : `  they differ from character ${common}: sent ${around(sent)}, recorded ${around(nearest)}`,
    ]
      .filter(Boolean)
      .join('\n');
  }
}

function keyOf(call: string, sql: string, params: string | undefined): string {
  return `${call}\u0000${sql}\u0000${params ?? ''}`;
}

/**
 * A fixture as reading it back gives it: what JSON leaves out (undefined fields) gone, tagged
 * values back, and the run's own names made fixed in its answers as in its statements (Spark names
 * a test's fresh schema in the tables it lists and in its errors).
 */
export function storedForm(fixture: Fixture): Fixture {
  return JSON.parse(volatileNamesOut(JSON.stringify(fixture, encodeValue)), decodeValue) as Fixture;
}
