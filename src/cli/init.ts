import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sqlString } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { openDriver } from '../dialects/index.js';
import { ScdError } from '../errors.js';
import { formatOf } from '../sources/files.js';

/** A column of the sample, with what the guesses look at. */
interface SampleColumn extends ColumnInfo {
  distinct: number;
  nulls: number;
}

export interface InitResult {
  flowFile: string;
  key: string;
  /** The sequence column guessed, or `{ processingTime: true }` when none looks like one. */
  sequence: string;
  columns: number;
}

/**
 * `scd init [DIR] --from FILE`: a commented flow file for a sample input, so a person starts from a
 * flow that runs. It reads the sample with DuckDB (in memory, nothing else is opened), lists its
 * columns, and guesses the key, the sequence and a delete marker from their names, types and
 * values; every guess is marked GUESS in the file. Never overwrites a flow file (unless `force`).
 */
export async function initFlow(dir: string, sample: string, options: { force?: boolean } = {}): Promise<InitResult> {
  const file = path.resolve(sample);
  if (!existsSync(file) || !statSync(file).isFile())
    throw new ScdError('USAGE', `--from ${sample} is not a file`, { fix: 'give a sample of the change data: a .ndjson, .jsonl, .json, .csv or .parquet file' });
  const format = formatOf(file);
  const folder = path.resolve(dir);
  const flowFile = path.join(folder, 'flow.yaml');
  if (existsSync(flowFile) && !options.force)
    throw new ScdError('USAGE', `${path.relative(process.cwd(), flowFile) || flowFile} exists already`, { fix: 'give another folder, or add --force to overwrite it' });
  const driver = await openDriver(':memory:');
  let columns: SampleColumn[];
  let rows: number;
  let deleteValue: { column: string; value: string } | undefined;
  try {
    const from = readerOf(file, format);
    const described = await driver.describe(`SELECT * FROM ${from}`);
    ({ columns, rows } = await profile(driver, from, described));
    deleteValue = await deleteMarker(driver, from, columns);
  } catch (e) {
    if (e instanceof ScdError) throw e;
    throw new ScdError('INPUT_UNREADABLE', `cannot read ${sample} as ${format}: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, {
      fix: 'give a sample file scdkit can apply',
    });
  } finally {
    await driver.close();
  }
  if (!columns.length) throw new ScdError('INPUT_UNREADABLE', `${sample} has no columns`, { fix: 'give a sample with records' });
  const key = guessKey(columns);
  const sequence = guessSequence(columns, key.name, deleteValue?.column);
  mkdirSync(folder, { recursive: true });
  writeFileSync(flowFile, flowText({ file, folder, rows, columns, key, sequence, deleteValue }));
  return { flowFile, key: key.name, sequence: sequence.name, columns: columns.length };
}

function readerOf(file: string, format: string): string {
  const f = sqlString(file);
  if (format === 'csv') return `read_csv(${f}, header = true)`;
  if (format === 'parquet') return `read_parquet(${f})`;
  return `read_json_auto(${f}, format = 'auto')`;
}

async function profile(driver: Driver, from: string, described: ColumnInfo[]): Promise<{ columns: SampleColumn[]; rows: number }> {
  const q = driver.dialect.quote;
  const parts = described.flatMap((c, i) => [`count(DISTINCT ${q(c.name)}) AS d${i}`, `count(*) - count(${q(c.name)}) AS n${i}`]);
  const row = (await driver.query(`SELECT count(*) AS total${parts.length ? `, ${parts.join(', ')}` : ''} FROM ${from}`))[0]!;
  return {
    rows: Number(row.total),
    columns: described.map((c, i) => ({ ...c, distinct: Number(row[`d${i}`]), nulls: Number(row[`n${i}`]) })),
  };
}

const DELETE_VALUES = /^(d|del|delete|deleted|remove|removed)$/i;

/** A text column named like an operation (op, operation, action, change_type) with a value that reads "delete". */
async function deleteMarker(driver: Driver, from: string, columns: SampleColumn[]): Promise<{ column: string; value: string } | undefined> {
  const q = driver.dialect.quote;
  for (const c of columns) {
    if (!/^_*(op|operation|action|change_?type|cdc_op|event_type)$/i.test(c.name) || !/CHAR|TEXT|STRING/i.test(c.type)) continue;
    const values = await driver.query(`SELECT DISTINCT CAST(${q(c.name)} AS VARCHAR) AS v FROM ${from} WHERE ${q(c.name)} IS NOT NULL LIMIT 20`);
    const hit = values.map((v) => String(v.v)).find((v) => DELETE_VALUES.test(v));
    return { column: c.name, value: hit ?? 'DELETE' };
  }
  return undefined;
}

interface Guess {
  name: string;
  why: string;
}

/** The sequence guessed: a column, or (none looks like one) each commit's time. */
interface SequenceGuess extends Guess {
  processingTime?: boolean;
}

/** What the flow file says for `sequenceBy: { processingTime: true }` (and the CLI, for the guess). */
const PROCESSING_TIME = '{ processingTime: true }';

function guessKey(columns: SampleColumn[]): Guess {
  const named = columns.find((c) => /^(id|key)$|_(id|key)$|[a-z](Id|Key)$/.test(c.name) && c.nulls === 0);
  if (named) return { name: named.name, why: 'its name reads as an identifier' };
  const first = columns.find((c) => c.nulls === 0) ?? columns[0]!;
  return { name: first.name, why: 'the first column without nulls; no column is named like an id' };
}

const TIME_TYPES = /^(TIMESTAMP|DATE|TIMESTAMP WITH TIME ZONE|TIMESTAMP_\w+)$/i;
const INTEGER_TYPES = /^(BIGINT|INTEGER|SMALLINT|TINYINT|HUGEINT|UBIGINT|UINTEGER)$/i;

/**
 * A column named like a time or a sequence, else the first time column, else the first integer
 * column; else none is guessed (a text column's order is rarely the changes' order): each
 * commit's time, which takes the order records arrive in as the order of truth.
 */
function guessSequence(columns: SampleColumn[], key: string, op?: string): SequenceGuess {
  const others = columns.filter((c) => c.name !== key && c.name !== op);
  const named = others.find((c) => /(^|_)(ts|ts_ms|timestamp|time|seq|sequence|version|lsn|offset)$|_at$|(updated|changed|modified)(_?on)?$|[a-z](At|Time|Ts)$/i.test(c.name));
  if (named) return { name: named.name, why: `its name reads as a time or a sequence (${named.type})` };
  const timed = others.find((c) => TIME_TYPES.test(c.type));
  if (timed) return { name: timed.name, why: `the first ${timed.type} column` };
  const counted = others.find((c) => INTEGER_TYPES.test(c.type));
  if (counted) return { name: counted.name, why: `the first integer column; no column looks like a time` };
  return {
    name: PROCESSING_TIME,
    processingTime: true,
    why: "no column looks like a time or a sequence, so each commit's time orders the changes (arrival order taken as the truth); or name the column that does",
  };
}

function flowText(s: {
  file: string;
  folder: string;
  rows: number;
  columns: SampleColumn[];
  key: Guess;
  sequence: SequenceGuess;
  deleteValue?: { column: string; value: string };
}): string {
  const rel = (p: string) => {
    const r = path.relative(s.folder, p).split(path.sep).join('/');
    return r === '' ? '.' : r;
  };
  // The source is the sample file itself, never its folder: exports, samples and notes are often
  // written beside a sample, and a landing folder applies every data file in it
  // (docs/decisions/0112-init-source-is-the-sample.md). The name (and target) is the file's,
  // from its first letter on (a table name: letters, digits, _).
  const source = /^[\w./-]+$/.test(rel(s.file)) ? rel(s.file) : JSON.stringify(rel(s.file));
  const name =
    path
      .basename(s.file)
      .replace(/\.[^.]*$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^[^a-z]+|_+$/g, '') || 'changes';
  const yamlName = (n: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(n) ? n : JSON.stringify(n));
  const width = Math.max(...s.columns.map((c) => c.name.length));
  const lines = [
    `# A flow for ${rel(s.file)}, written by \`scd init\` from ${s.rows} sample record${s.rows === 1 ? '' : 's'}.`,
    '# Lines marked GUESS were guessed from the sample: check them before you rely on the result.',
    '# Run it:  scd apply flow.yaml   then   scd export flow.yaml   (README: the `scd` command; docs/FLOWS.md)',
    `name: ${name}`,
    `target: ${name}`,
    `keys: [${yamlName(s.key.name)}]${pad(`keys: [${yamlName(s.key.name)}]`)}# GUESS: ${s.key.why}`,
    s.sequence.processingTime
      ? `sequenceBy: ${PROCESSING_TIME}${pad(`sequenceBy: ${PROCESSING_TIME}`)}# GUESS: ${s.sequence.why}`
      : `sequenceBy: ${yamlName(s.sequence.name)}${pad(`sequenceBy: ${yamlName(s.sequence.name)}`)}# GUESS: ${s.sequence.why}; the change with the greatest value wins`,
  ];
  if (s.deleteValue) {
    const expr = `${yamlName(s.deleteValue.column)} = '${s.deleteValue.value.replace(/'/g, "''")}'`;
    lines.push(`applyAsDeletes: ${JSON.stringify(expr)}${pad(`applyAsDeletes: ${JSON.stringify(expr)}`)}# GUESS: a SQL boolean over the source columns`);
    lines.push(`exceptColumns: [${yamlName(s.deleteValue.column)}]${pad(`exceptColumns: [${yamlName(s.deleteValue.column)}]`)}# not kept in the target`);
  } else {
    lines.push(`# applyAsDeletes: "op = 'DELETE'"     # which records are deletes: a SQL boolean over the source columns`);
    lines.push('# exceptColumns: [op]                 # columns not kept in the target');
  }
  lines.push(
    'storedAs: scd2                         # scd2: every version with its validity; scd1: the latest only',
    `database: ${name}.duckdb${pad(`database: ${name}.duckdb`)}# relative to this file; or postgres://user@host/db`,
    'source:',
    '  # The sample file itself. For files as they land, name a folder where only change files land',
    '  # (not one exports are written to), e.g. path: landing/ ; each new file there is applied once.',
    `  path: ${source}`,
    '',
    `# The sample's columns (as DuckDB reads ${path.extname(s.file)}; docs/TYPES.md says how scdkit types them):`,
    ...s.columns.map((c) => `#   ${c.name.padEnd(width)}  ${c.type}${c.nulls ? `  (${c.nulls} null)` : ''}`),
    '',
  );
  return lines.join('\n');
}

function pad(text: string): string {
  return ' '.repeat(Math.max(1, 39 - text.length));
}
