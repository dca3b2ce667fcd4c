import type { z } from 'zod';
import { checkDatabaseLocation } from '../dialects/database-location.js';
import { ScdError } from '../errors.js';
import { DEFAULT_DATABASE, type Flow, PROCESSING_TIME_COLUMN, resolveAgainst } from './flow.js';
import { foreignName } from './foreign-names.js';
import { type FlowInput, flowSchema, sourceSchema } from './schema.js';

const FLOW_FIELDS = Object.keys(flowSchema.shape);

/** Validate raw flow data into a typed Flow, or throw one ScdError naming file, field and fix. */
export function validateFlow(raw: unknown, origin: string, baseDir: string): Flow {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ScdError('FLOW_INVALID', 'a flow must be an object with fields such as target, keys and sequenceBy', {
      file: origin,
      fix: 'see examples/customers/flow.yaml',
    });
  }
  const parsed = flowSchema.safeParse(raw);
  if (!parsed.success) throw toScdError(parsed.error, origin, raw as Record<string, unknown>);
  const f = parsed.data;
  const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);
  const src = f.source;
  const debezium = src?.format === 'debezium';
  const snapshot = src?.mode === 'snapshot';
  const fail = (field: string, message: string, fix: string) => {
    throw new ScdError('FLOW_INVALID', message, { file: origin, field, fix });
  };
  if (src) {
    const given = [src.path, src.table, src.query].filter((x) => x !== undefined).length;
    if (given !== 1) fail('source', 'a source needs exactly one of path, table or query', 'e.g. source: { path: landing/ }');
    if (src.watermark && !(src.table || src.query)) fail('source.watermark', 'a watermark is for table or query sources', 'remove it');
    // A query runs as written, with every right of the database's user (files, settings, other
    // schemas, the server's functions): no guard holds it to rows of the database's own tables.
    if (src.query !== undefined && src.trusted !== true)
      fail(
        'source.query',
        'a query source runs its SQL as written, with every right of the database user (reading files and settings included): it is for trusted flows only',
        'read a table or a view instead (source: { table: NAME }: a view holds any SELECT), or add trusted: true under source when whoever writes this flow file may run any SQL on the database',
      );
    if (src.trusted !== undefined && src.query === undefined) fail('source.trusted', 'trusted is for a query source', 'remove it');
    if (snapshot && !src.path) fail('source.mode', 'snapshot mode reads files from source.path', 'set source.path');
    if (src.versionColumn && !snapshot) fail('source.versionColumn', 'versionColumn is for snapshot mode', 'add mode: snapshot or remove it');
    if (debezium && snapshot) fail('source.mode', 'Debezium envelopes are changes, not snapshots', 'remove mode: snapshot');
  }
  // Implied settings of Debezium and snapshot sources (their own columns start with _).
  // { processingTime: true }: the commit stamps each record with its time (sources/processing-time.ts).
  const processingTime = typeof f.sequenceBy === 'object' && !Array.isArray(f.sequenceBy);
  const processing = processingTime ? (f.sequenceBy as { processingTime: true | 'timestamp' | 'date'; column?: string }) : undefined;
  const processingGrain = processing?.processingTime === 'date' ? 'date' : 'timestamp';
  const processingColumn = processing?.column ?? PROCESSING_TIME_COLUMN;
  let sequenceBy: string[] | 'debezium' | undefined = processingTime ? [processingColumn] : list(f.sequenceBy as string | string[] | undefined);
  let applyAsDeletes = f.applyAsDeletes;
  let applyAsTruncates = f.applyAsTruncates;
  const columns = list(f.columns);
  let exceptColumns = list(f.exceptColumns);
  const implied = (cols: string[]) => {
    if (columns) return;
    exceptColumns = [...(exceptColumns ?? []), ...cols.filter((c) => !(exceptColumns ?? []).includes(c) && !sequenceByKept(c))];
  };
  const sequenceByKept = (c: string) => (columns ?? []).includes(c);
  if (debezium) {
    // The sequence and the position columns to except follow from what the records carry.
    sequenceBy ??= 'debezium';
    applyAsDeletes ??= "_op = 'd'";
    applyAsTruncates ??= "_op = 't'";
    implied(['_op', '_ts_ms']);
  }
  if (processingTime) {
    if (debezium || snapshot || src?.table || src?.query)
      fail('sequenceBy', 'processing time sequences records read from files or given in code', 'give sequenceBy a column of the source');
    implied([processingColumn]);
    checkProcessingType(f.columnTypes?.[processingColumn], processingColumn, processingGrain, fail);
  }
  if (snapshot) {
    if (f.applyAsDeletes || f.applyAsTruncates)
      fail('applyAsDeletes', 'a snapshot source deletes the keys missing from a snapshot by itself', 'remove applyAsDeletes/applyAsTruncates');
    if (f.sequenceBy) fail('sequenceBy', 'a snapshot source is sequenced by its snapshot version', 'remove sequenceBy (use source.versionColumn for a column)');
    sequenceBy = [src!.versionColumn ?? '_snapshot_version'];
    applyAsDeletes = '_snapshot_deleted';
    implied(src!.versionColumn ? ['_snapshot_deleted'] : ['_snapshot_version', '_snapshot_deleted']);
  }
  if (f.database !== undefined) {
    try {
      checkDatabaseLocation(f.database);
    } catch (e) {
      if (e instanceof ScdError) fail('database', e.problem, e.fix ?? '');
      throw e;
    }
  }
  if (!sequenceBy) fail('sequenceBy', '"sequenceBy" is required', 'name the column that orders events, e.g. sequenceBy: updated_at');
  const flow: Flow = {
    name: f.name ?? f.target,
    target: f.target,
    keys: list(f.keys)!,
    sequenceBy: sequenceBy!,
    processingTime,
    processingGrain,
    processingColumn,
    applyAsDeletes,
    applyAsTruncates,
    columns,
    exceptColumns,
    storedAs: f.storedAs,
    trackHistory: list(f.trackHistory),
    trackHistoryExcept: list(f.trackHistoryExcept),
    ignoreNullUpdates: f.ignoreNullUpdates,
    previousValues: f.previousValues,
    database: resolveAgainst(baseDir, f.database ?? DEFAULT_DATABASE),
    databaseIsDefault: f.database === undefined,
    schema: f.schema,
    source: src ? { ...src, path: src.path ? resolveAgainst(baseDir, src.path) : undefined } : undefined,
    expect: f.expect ?? {},
    schemaEvolution: f.schemaEvolution,
    columnTypes: f.columnTypes ?? {},
    timeZone: f.timeZone,
    startAtColumn: f.startAtColumn,
    endAtColumn: f.endAtColumn,
    endSentinel: f.endSentinel,
    isCurrentColumn: f.isCurrentColumn,
    isCurrentValues: f.isCurrentValues,
    endInclusive: f.endInclusive,
    surrogateKey: f.surrogateKey,
    deletes: f.deletes,
    deletedColumn: f.deletedColumn,
    origin,
    baseDir,
  };
  checkCombinations(flow);
  return flow;
}

function checkCombinations(flow: Flow): void {
  const fail = (field: string, message: string, fix: string) => {
    throw new ScdError('FLOW_INVALID', message, { file: flow.origin, field, fix });
  };
  // scdkit's own tables are named _scd_… (store/names.ts): a target never is.
  if (flow.target.toLowerCase().startsWith('_scd_'))
    fail('target', `target "${flow.target}" starts with _scd_, which names scdkit's own tables`, 'give the target a name that does not start with _scd_');
  if (flow.columns && flow.exceptColumns) fail('exceptColumns', '"columns" and "exceptColumns" cannot both be set', 'keep one of them');
  if (flow.trackHistory && flow.trackHistoryExcept) fail('trackHistoryExcept', '"trackHistory" and "trackHistoryExcept" cannot both be set', 'keep one of them');
  if (flow.storedAs === 'scd1' && (flow.trackHistory || flow.trackHistoryExcept))
    fail('trackHistory', 'an scd1 target keeps no history', 'remove trackHistory/trackHistoryExcept or use storedAs: scd2');
  // A Debezium sequence its records decide starts with _ts_ms.
  const sequence = flow.sequenceBy === 'debezium' ? ['_ts_ms'] : flow.sequenceBy;
  for (const [field, cols] of [
    ['keys', flow.keys],
    ['sequenceBy', sequence],
  ] as const) {
    const dup = cols.find((c, i) => cols.indexOf(c) !== i);
    if (dup) fail(field, `column "${dup}" is listed twice`, 'list each column once');
  }
  try {
    new Intl.DateTimeFormat('en', { timeZone: flow.timeZone });
  } catch {
    fail('timeZone', `"${flow.timeZone}" is not a time zone`, 'give an IANA zone name such as UTC, Europe/Berlin or Asia/Kolkata');
  }
  const seqKey = sequence.find((c) => flow.keys.includes(c));
  if (seqKey) fail('sequenceBy', `"${seqKey}" is a key; the sequence must be another column`, 'order events by a timestamp or version column');
  for (const k of flow.keys) {
    if (flow.exceptColumns?.includes(k)) fail('exceptColumns', `key "${k}" cannot be excepted: keys are always kept`, `remove "${k}" from exceptColumns`);
    if (flow.trackHistory?.includes(k)) fail('trackHistory', `key "${k}" cannot be tracked: keys identify the record`, `remove "${k}" from trackHistory`);
  }
  if (flow.previousValues) {
    if (flow.storedAs !== 'scd2')
      fail('previousValues', 'previousValues keeps the value of the previous version, and an scd1 target keeps one version', 'use storedAs: scd2, or remove previousValues');
    for (const of of Object.keys(flow.previousValues)) {
      if (flow.keys.includes(of)) fail(`previousValues.${of}`, `key "${of}" never changes: it has no previous value`, `remove "${of}" from previousValues`);
      if (sequence.includes(of)) fail(`previousValues.${of}`, `"${of}" is a sequence column: its previous value is the version's start`, `remove "${of}" from previousValues`);
    }
  }
  const names = [flow.startAtColumn, flow.endAtColumn, flow.isCurrentColumn, flow.surrogateKey]
    .concat(flow.deletes === 'tombstone' ? [flow.deletedColumn] : [])
    .concat(Object.values(flow.previousValues ?? {}))
    .filter((n): n is string => !!n);
  const dupOut = names.find((n, i) => names.indexOf(n) !== i);
  if (dupOut) fail('endAtColumn', `output column "${dupOut}" is named twice`, 'give each output column its own name');
  if (flow.storedAs === 'scd1' && flow.endInclusive) fail('endInclusive', 'endInclusive applies to scd2 targets only (an scd1 row has no end)', 'remove it or use storedAs: scd2');
  if (flow.isCurrentValues && !flow.isCurrentColumn)
    fail('isCurrentValues', 'isCurrentValues are the values of isCurrentColumn, which the flow does not name', 'add isCurrentColumn: is_current, or remove isCurrentValues');
  if (flow.isCurrentValues && flow.isCurrentValues[0] === flow.isCurrentValues[1])
    fail('isCurrentValues', `the current and the not-current value are both "${flow.isCurrentValues[0]}"`, 'give two different values, current first: [Y, N]');
  if (flow.storedAs === 'scd1' && (flow.endSentinel !== undefined || flow.isCurrentColumn || flow.deletes === 'tombstone'))
    fail('storedAs', 'endSentinel, isCurrentColumn and deletes: tombstone apply to scd2 targets only', 'remove them or use storedAs: scd2');
}

function toScdError(error: z.ZodError, origin: string, raw: Record<string, unknown>): ScdError {
  // A misspelt field explains the rest ("keyz" makes "keys" missing): report it first.
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const known = issue.path[0] === 'source' ? Object.keys(sourceSchema.shape) : issue.path[0] === 'expect' ? ['sql', 'action'] : FLOW_FIELDS;
    // A Databricks or dbt name of a flow field: the field, and how it is written here.
    const foreign = issue.path.length === 0 ? foreignName(key) : undefined;
    const near = foreign ? foreign.field : closest(key, known);
    return new ScdError('FLOW_INVALID', `"${key}" is not a ${issue.path[0] === 'source' ? 'source' : issue.path[0] === 'expect' ? 'expectation' : 'flow'} field`, {
      file: origin,
      field: [...issue.path, key].join('.'),
      fix: foreign && !near ? foreign.hint : near ? `did you mean "${near}"?${foreign ? ` (${foreign.hint})` : ''}` : `remove it; the fields are ${known.join(', ')}`,
    });
  }
  const field = issue.path.join('.') || '(flow)';
  const missing = issue.path.length === 1 && raw[String(issue.path[0])] === undefined;
  if (missing) {
    return new ScdError('FLOW_INVALID', `"${field}" is required`, { file: origin, field, fix: requiredFix(field) });
  }
  return new ScdError('FLOW_INVALID', issue.message.replace(/^Invalid input: /, 'invalid value: '), {
    file: origin,
    field,
    fix: fieldFix(field),
  });
}

function requiredFix(field: string): string {
  switch (field) {
    case 'target':
      return 'name the table to maintain, e.g. target: dim_customer';
    case 'keys':
      return 'list the columns that identify a record, e.g. keys: [customer_id]';
    case 'sequenceBy':
      return 'name the column that orders events, e.g. sequenceBy: updated_at';
    default:
      return `add "${field}"`;
  }
}

function fieldFix(field: string): string {
  if (field === 'storedAs') return 'use "scd2" or "scd1"';
  if (field === 'deletes') return 'use "close" or "tombstone"';
  if (field.startsWith('source.format')) return 'use ndjson, json, csv or parquet';
  if (['keys', 'sequenceBy', 'columns', 'exceptColumns', 'trackHistory', 'trackHistoryExcept'].includes(field.split('.')[0]!))
    return 'give a column name or a list of column names';
  return 'see docs/FLOWS.md';
}

/** The closest known word within edit distance 3, for "did you mean". */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = 4;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

export type { FlowInput };

/**
 * A processing-time column's type follows from its grain (a timestamp with time zone, or a date):
 * a declared type that differs would quarantine every stamped record, so it is refused here.
 */
function checkProcessingType(declared: string | undefined, column: string, grain: 'timestamp' | 'date', fail: (field: string, message: string, fix: string) => never): void {
  if (declared === undefined) return;
  const t = declared.trim().toLowerCase().replace(/\s+/g, ' ');
  const fits = grain === 'date' ? t === 'date' : ['timestamptz', 'timestamp with time zone'].includes(t);
  if (!fits)
    fail(
      `columnTypes.${column}`,
      `"${column}" holds the commit's ${grain === 'date' ? 'date' : 'time (a timestamp with time zone)'}, not a ${declared}`,
      grain === 'date' ? `remove columnTypes.${column} (it is a date)` : `write sequenceBy: { processingTime: date } for the commit's date, or remove columnTypes.${column}`,
    );
}
