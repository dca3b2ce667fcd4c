import { accessSync, constants, existsSync, readFileSync, rmSync, type Stats, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { apply, applySource, databaseOf, withDatabase } from '../api.js';
import { connectionLost, lostReason } from '../dialects/connection-lost.js';
import type { Driver } from '../dialects/driver.js';
import { FILE_WAIT_MS } from '../dialects/open-waiting.js';
import { QueryError, ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { loadFlowFile } from '../flow/load.js';
import type { ApplyResult } from '../plan/apply.js';
import { compact } from '../plan/compact.js';
import { type DryRun, statementText } from '../plan/dry-run.js';
import { rebuild } from '../plan/rebuild.js';
import { readCommitLog } from '../query/commit-log.js';
import { type CommitBounds, commitRange } from '../query/commit-range.js';
import { localDatabasePath } from '../query/engine-of.js';
import { filtered, targetQuery } from '../query/export.js';
import { asOfQuery, changesQuery, keyHistoryQuery, keyVersionCount, quarantineQuery, versionQuery } from '../query/history.js';
import { type OutputFormat, type RowQuery, readRows, writeRows } from '../query/output.js';
import { flowStatus, statusBeforeDatabase } from '../query/status.js';
import { whereRefusal } from '../query/where.js';
import { serveCommand } from '../serve/command.js';
import { resolveInputs } from '../sources/files.js';
import { TIED_KEYS_LISTED } from '../store/commits.js';
import { initFlow } from './init.js';
import { changeText, commitsCsv, logView, statusText } from './log-view.js';
import { plural, renderTable } from './print.js';
import { profileTable } from './profile.js';
import { terminalText } from './terminal-text.js';
import { watch } from './watch.js';

type Format = OutputFormat | 'table';

interface DbOpts {
  db?: string;
}
interface OutOpts extends DbOpts {
  format?: Format;
  out?: string;
}

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function outputOptions(cmd: Command): Command {
  return cmd
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .addOption(new Option('--format <format>', 'table, ndjson, csv or parquet (default: table on a terminal, else ndjson)').choices(['table', 'ndjson', 'csv', 'parquet']))
    .option('--out <path>', 'write to this file instead of stdout');
}

/** The format an --out file's name says; a name that says none is refused (a typo never writes NDJSON to x.cvs). */
const OUT_EXTENSIONS: Record<string, Format> = { '.csv': 'csv', '.parquet': 'parquet', '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.json': 'ndjson', '.txt': 'table' };

export function defaultFormat(format: Format | undefined, out: string | undefined): Format {
  if (out) {
    const ext = path.extname(out).toLowerCase();
    const named = OUT_EXTENSIONS[ext];
    if (!named)
      throw new ScdError('USAGE', `--out ${out}: ${ext ? `"${ext}" is not a file type scd writes` : 'the name has no extension to tell its format'}`, {
        fix: 'name it .csv, .parquet, .ndjson (or .jsonl, .json) or .txt (a table)',
      });
    if (format && format !== named && !(format === 'ndjson' && ext === '.json'))
      throw new ScdError('USAGE', `--format ${format} but --out ${out} names ${named}`, { fix: `drop --format, or name the file for ${format}` });
    checkOutPath(out);
    return format ?? named;
  }
  if (format) return format;
  return process.stdout.isTTY ? 'table' : 'ndjson';
}

/**
 * An --out file goes into a folder that exists and scd may write to: scd never creates folders
 * (a mistyped folder would get a tree of its own), and the file's problem is told before any
 * database is opened, in one line, the same for every format.
 */
function checkOutPath(out: string): void {
  const abs = path.resolve(out);
  const folder = path.dirname(out) || '.';
  let stat: Stats;
  try {
    stat = statSync(path.dirname(abs));
  } catch {
    throw new ScdError('USAGE', `--out ${out}: the folder ${folder} does not exist`, { fix: `create it first (mkdir -p ${folder}), or write into a folder that exists` });
  }
  if (!stat.isDirectory()) throw new ScdError('USAGE', `--out ${out}: ${folder} is not a folder`, { fix: 'name a file in a folder' });
  if (existsSync(abs) && statSync(abs).isDirectory())
    throw new ScdError('USAGE', `--out ${out} is a folder`, { fix: `name a file in it, e.g. --out ${path.join(out, `export${path.extname(out) || '.csv'}`)}` });
  try {
    accessSync(path.dirname(abs), constants.W_OK);
    if (existsSync(abs)) accessSync(abs, constants.W_OK);
  } catch {
    throw new ScdError('USAGE', `--out ${out}: scd may not write ${existsSync(abs) ? 'this file' : `into the folder ${folder}`}`, {
      fix: 'write somewhere you may write, or change its permissions',
    });
  }
}

/** Write an --out file whose path checkOutPath passed; a failure to write is one line too. */
function writeOutFile(out: string, text: string): void {
  try {
    writeFileSync(path.resolve(out), text);
  } catch (e) {
    throw new ScdError('USAGE', `cannot write --out ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { fix: 'check the path and its permissions' });
  }
}

/**
 * A read-only command never creates a database: a DuckDB file or a PGlite folder that is not
 * there (a mistyped --db, or nothing applied yet) is refused before it is opened, which would
 * create it. A server's database is never created by opening it.
 */
function checkDatabaseExists(flow: Flow, db: string | undefined): void {
  const database = databaseOf(flow, { database: db });
  const local = localDatabasePath(database);
  if (local === undefined || existsSync(path.resolve(local))) return;
  throw new ScdError('NOT_APPLIED', `target "${flow.target}": database ${database} does not exist`, {
    file: flow.origin,
    fix: db ? 'check --db (a read never creates a database)' : 'run `scd apply` first, or check the flow\'s "database"',
  });
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a commit version: 1, 2, ...');
  // A number past 2^53 reads as another number: no target has that many commits.
  if (!Number.isSafeInteger(n))
    throw new InvalidArgumentError(`${value.trim()} is beyond any commit a target can have: expected a commit version: 1, 2, ... (\`scd log\` lists them)`);
  return n;
}

/**
 * How long a command waits for a database file another process holds (DuckDB: an apply, or
 * `--watch` while it applies) before it says what holds it.
 */
const wait = { waitMs: FILE_WAIT_MS };

/**
 * Run a read-only command: open the flow's database, build the query, print it. `where` is a
 * person's own SQL in the query: the engine's refusal of it while it runs is theirs to fix.
 */
async function printQuery(flowFile: string, opts: OutOpts & { where?: string }, build: (driver: Driver, flow: Flow) => Promise<RowQuery>): Promise<void> {
  const format = defaultFormat(opts.format, opts.out);
  const flow = loadFlowFile(flowFile);
  checkDatabaseExists(flow, opts.db);
  let cutShort = false;
  try {
    await withDatabase(flow, { database: opts.db, ...wait }, async (driver) => {
      const query = await build(driver, flow);
      try {
        await printRows(driver, query, format, opts.out);
      } catch (e) {
        cutShort = true;
        throw (opts.where !== undefined && whereRefusal(e, opts.where)) || e;
      }
    });
  } catch (e) {
    // A file cut short is not left behind to be read as the whole export: removed once its writer
    // has ended (writeRows closes its stream on failure) and the database is closed.
    if (cutShort && opts.out) rmSync(path.resolve(opts.out), { force: true });
    throw e;
  }
}

async function printRows(driver: Driver, query: RowQuery, format: Format, out?: string): Promise<void> {
  if (format === 'table') {
    const rows = await readRows(driver, query);
    const text = renderTable(
      query.columns.map((c) => c.name),
      rows,
    );
    if (out) writeOutFile(out, text);
    else process.stdout.write(rows.length ? text : '(no rows)\n');
  } else {
    await writeRows(driver, query, { format, out });
  }
}

/** How many tied keys the summary line names. */
const TIED_KEYS_SHOWN = 5;

/**
 * One line per commit: its records' fates, the keys that tied, and what it changed (the counts
 * docs/SEMANTICS.md §5 defines).
 */
export function summary(r: ApplyResult): string {
  // The first few tied keys, as `scd show --key` takes them; `--json` lists up to TIED_KEYS_LISTED.
  const keys = r.tiedKeys ?? [];
  const more = keys.length >= TIED_KEYS_LISTED ? ', … more' : keys.length > TIED_KEYS_SHOWN ? `, … ${keys.length - TIED_KEYS_SHOWN} more` : '';
  const tied = keys.length
    ? ` (${keys
        .slice(0, TIED_KEYS_SHOWN)
        .map((k) =>
          Object.entries(k)
            .map(([c, v]) => `${c}=${v}`)
            .join(' '),
        )
        .join(', ')}${more})`
    : '';
  const what =
    r.operation === 'apply'
      ? `read ${plural(r.rowsRead, 'row')} = ${r.eventsApplied} applied + ${plural(r.duplicates, 'duplicate')} + ${r.quarantined} quarantined${r.ties ? `; ${plural(r.ties, 'tie')}${tied}` : ''}; `
      : `${r.operation}: `;
  return `commit ${r.version}: ${what}${changeText(r)} (${r.durationMs} ms)`;
}

export function buildProgram(): Command {
  const program = new Command('scd')
    .description('Slowly changing dimensions (SCD type 2 and type 1) from change data, exactly')
    .version(version)
    .enablePositionalOptions()
    .showHelpAfterError('(run `scd --help` for usage)');

  program
    .command('apply')
    .description("apply change records to the flow's target as one atomic commit")
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--input <file...>', "input files (.ndjson, .jsonl, .json, .csv, .parquet) or folders; default: the new files of the flow's source.path")
    .option('--each', 'apply each input file as its own commit, in name order')
    .option('--watch', "keep running: apply new files of the flow's source.path as they land (Ctrl-C stops)")
    .option('--interval <seconds>', 'with --watch: how often to look for new files', '2')
    .option('--json', 'print the result of each commit as one JSON line')
    .option('--no-wait', 'fail at once when another commit (of any process) is changing the same target (default: wait for it)')
    .option('--dry-run', 'print the statements the commit would run and what it would do, changing nothing (its transaction is rolled back)')
    .option('--profile', "after each commit, print where its time went, step by step, with each step's rows (stderr; --json has them as `steps`)")
    .action(
      async (
        flowFile: string,
        opts: { db?: string; input?: string[]; each?: boolean; watch?: boolean; interval: string; json?: boolean; wait?: boolean; dryRun?: boolean; profile?: boolean },
      ) => {
        const flow = loadFlowFile(flowFile);
        const progress = opts.json ? undefined : (m: string) => process.stderr.write(`  ${m}\n`);
        const print = (result: ApplyResult) => {
          process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : summary(result) + '\n');
          if (opts.profile && result.steps) process.stderr.write(profileTable(result.version, result.steps));
        };
        if (opts.dryRun) return printDryRun(flow, opts, progress);
        if (opts.input?.length) {
          if (opts.watch) throw new ScdError('USAGE', "--watch follows the flow's source.path, not --input files", { fix: 'drop --input' });
          const files = resolveInputs(opts.input, flow.source?.format);
          const batches = opts.each ? files.map((f) => [f.path]) : [files.map((f) => f.path)];
          for (const inputs of batches) print(await apply(flow, { database: opts.db, noWait: opts.wait === false, waitMs: applyWait(opts), inputs, onProgress: progress }));
          return;
        }
        if (!opts.watch) {
          const report = await applySource(flow, {
            database: opts.db,
            noWait: opts.wait === false,
            waitMs: applyWait(opts),
            each: opts.each,
            onProgress: progress,
            onCommit: print,
          });
          for (const w of report.warnings) process.stderr.write(`scd: warning: ${w}\n`);
          // --json prints a line for every run: a script reads one even when nothing was new.
          if (!report.results.length)
            process.stdout.write(
              opts.json ? JSON.stringify({ version: null, nothingNew: true, alreadyApplied: report.alreadyApplied, warnings: report.warnings }) + '\n' : `${nothingNew(report)}\n`,
            );
          return;
        }
        await watch(flow, { database: opts.db, intervalMs: Number(opts.interval) * 1000, each: !!opts.each, progress, print });
      },
    );

  outputOptions(
    program
      .command('export')
      .description("write the target's rows, sorted by keys then start")
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--version <n>', 'the target as it stood after commit N (time travel)', positiveInt)
      .option('--current', 'only live versions: current and not deleted')
      .option('--where <sql>', "only rows where this SQL boolean over the target's columns holds, e.g. \"tier = 'gold'\""),
  ).action((flowFile: string, opts: OutOpts & { version?: number; current?: boolean; where?: string }) =>
    printQuery(flowFile, opts, async (driver, flow) =>
      filtered(driver, flow, opts.version ? await versionQuery(driver, flow, opts.version) : await targetQuery(driver, flow), { current: opts.current, where: opts.where }),
    ),
  );

  outputOptions(
    program
      .command('log')
      .description('the commit log, newest first')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--json', 'NDJSON, for machines (same as --format ndjson): each line a commit as `apply --json` prints it'),
  ).action((flowFile: string, opts: OutOpts & { json?: boolean }) => printLog(flowFile, { ...opts, format: opts.json ? 'ndjson' : opts.format }));

  outputOptions(
    program
      .command('changes')
      .description('the change data feed: rows each commit changed, with _change_type, _commit_version, _commit_timestamp')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--from-version <n>', 'first commit (default: the first)', positiveInt)
      .option('--to-version <m>', 'last commit (default: the latest)', positiveInt)
      .option('--from-timestamp <time>', 'from the first commit made at or after TIME (ISO-8601; no zone: UTC)')
      .option('--to-timestamp <time>', 'to the last commit made at or before TIME'),
  ).action((flowFile: string, opts: OutOpts & CommitBounds) =>
    printQuery(flowFile, opts, async (driver, flow) => {
      const { from, to } = await commitRange(driver, flow, opts);
      return changesQuery(driver, flow, from, to);
    }),
  );

  outputOptions(
    program
      .command('as-of')
      .description('the versions valid at TIME (start <= TIME < end)')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .argument('<time>', 'a value of the sequence: 2025-06-15, 2025-06-15T09:00:00 or 2025-06-15T09:00:00Z (a zone is converted to UTC), or a number'),
  ).action((flowFile: string, time: string, opts: OutOpts) => printQuery(flowFile, opts, (driver, flow) => asOfQuery(driver, flow, time)));

  outputOptions(
    program
      .command('show')
      .description('every version of one key, with what changed between consecutive versions')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .requiredOption('--key <col=value...>', 'the key, e.g. --key customer_id=501'),
  ).action(async (flowFile: string, opts: OutOpts & { key: string[] }) => {
    const key: Record<string, string> = {};
    for (const kv of opts.key) {
      const i = kv.indexOf('=');
      if (i < 1) throw new ScdError('USAGE', `--key ${kv} is not col=value`, { fix: 'write --key customer_id=501' });
      const column = kv.slice(0, i);
      if (Object.hasOwn(key, column)) throw new ScdError('USAGE', `--key ${column} is given twice (${column}=${key[column]} and ${kv})`, { fix: `give one --key ${column}=VALUE` });
      key[column] = kv.slice(i + 1);
    }
    return printQuery(flowFile, opts, async (driver, flow) => {
      const query = await keyHistoryQuery(driver, flow, key);
      if (!(await keyVersionCount(driver, query))) {
        const shown = Object.entries(key)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ');
        throw new ScdError('USAGE', `key ${shown} has no versions in ${flow.target}`, { fix: 'check the value (`scd export` lists the keys there are)' });
      }
      return query;
    });
  });

  outputOptions(
    program
      .command('quarantine')
      .description('records that could not become events: commit, file, line, reason and the raw record')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--commit <n>', 'only those of commit N', positiveInt)
      .option('--raw', 'print only the raw records, one a line (fix them and apply the file again)'),
  ).action(async (flowFile: string, opts: OutOpts & { commit?: number; raw?: boolean }) => {
    if (!opts.raw) return printQuery(flowFile, opts, (driver, flow) => quarantineQuery(driver, flow, opts.commit));
    if (opts.out) checkOutPath(opts.out);
    const flow = loadFlowFile(flowFile);
    checkDatabaseExists(flow, opts.db);
    await withDatabase(flow, { database: opts.db, ...wait }, async (driver) => {
      const rows = await readRows(driver, await quarantineQuery(driver, flow, opts.commit));
      if (opts.out) return writeOutFile(opts.out, rows.map((r) => `${r.raw}\n`).join(''));
      // A person reading them on a terminal sees what it would act on as escapes; a pipe or a
      // file gets the records exactly as they were, to be fixed and applied again.
      const shown = process.stdout.isTTY ? (raw: unknown) => terminalText(String(raw)) : (raw: unknown) => String(raw);
      process.stdout.write(rows.map((r) => `${shown(r.raw)}\n`).join(''));
    });
  });

  program
    .command('compact')
    .description('fold kept events older than T into the fewest that give the same history; later events older than T are quarantined')
    .argument('<flow>', 'flow file (.yaml or .json)')
    .requiredOption('--before <T>', 'a value of the sequence (its first part), e.g. 2025-01-01')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--json', 'print the result as one JSON line')
    .action(async (flowFile: string, opts: { db?: string; before: string; json?: boolean }) => {
      const flow = loadFlowFile(flowFile);
      const r = await withDatabase(flow, { database: opts.db, ...wait }, (driver) =>
        compact(driver, flow, opts.before, opts.json ? undefined : (m) => process.stderr.write(`  ${m}\n`)),
      );
      process.stdout.write(
        opts.json
          ? JSON.stringify(r) + '\n'
          : `commit ${r.version}: compact: ${plural(r.eventsFolded, 'event')} before ${opts.before} folded into ${r.eventsWritten} (${r.durationMs} ms)\n`,
      );
    });

  program
    .command('rebuild')
    .description('recompute the target from its kept events under the flow as it is now (full refresh)')
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--json', 'print the result as one JSON line')
    .action(async (flowFile: string, opts: { db?: string; json?: boolean }) => {
      const flow = loadFlowFile(flowFile);
      const result = await withDatabase(flow, { database: opts.db, ...wait }, (driver) => rebuild(driver, flow, opts.json ? undefined : (m) => process.stderr.write(`  ${m}\n`)));
      process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : summary(result) + '\n');
    });

  program
    .command('status')
    .description('one screen about the flow: target, engine, rows, keys, current rows, last commit, pending files, quarantine, event log')
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--json', 'print it as one JSON object')
    .action(async (flowFile: string, opts: { db?: string; json?: boolean }) => {
      const flow = loadFlowFile(flowFile);
      // A --db that names no database is a mistyped one, as for every read.
      if (opts.db) checkDatabaseExists(flow, opts.db);
      const database = databaseOf(flow, { database: opts.db });
      // The flow's own DuckDB file or PGlite folder not there yet (nothing applied) is not created by looking at it.
      const local = localDatabasePath(database);
      const status =
        local !== undefined && !existsSync(local)
          ? statusBeforeDatabase(flow, database)
          : await withDatabase(flow, { database: opts.db, ...wait }, (driver) => flowStatus(driver, flow));
      process.stdout.write(opts.json ? JSON.stringify(status) + '\n' : statusText(status));
    });

  program
    .command('init')
    .description('write a commented flow file (DIR/flow.yaml) for a sample input: its columns, a guessed key and sequence')
    .argument('[dir]', 'folder of the new flow file', '.')
    .requiredOption('--from <file>', 'a sample of the change data (.ndjson, .jsonl, .json, .csv, .parquet)')
    .option('--force', 'overwrite an existing flow.yaml')
    .action(async (dir: string, opts: { from: string; force?: boolean }) => {
      const r = await initFlow(dir, opts.from, { force: opts.force });
      const shown = path.relative(process.cwd(), r.flowFile) || r.flowFile;
      process.stdout.write(
        `wrote ${shown}: ${plural(r.columns, 'column')}, key ${r.key} and sequence ${r.sequence} guessed (marked GUESS: check them)\n` +
          `next: scd apply ${shown} && scd export ${shown}\n`,
      );
    });

  program
    .command('serve')
    .description("a read-only web app over the flow's database: overview, key history, commits, quarantine, as-of")
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--port <n>', 'port (0: any free port)', '8321')
    .option('--host <host>', 'address to listen on (loopback: only this machine)', '127.0.0.1')
    .option('--open', 'open the URL in a browser')
    .action(serveCommand);
  return program;
}

/** `scd apply --dry-run`: one commit, rolled back; its statements, then what it would have done. */
async function printDryRun(flow: Flow, opts: { db?: string; input?: string[]; each?: boolean; watch?: boolean; json?: boolean; wait?: boolean }, progress?: (m: string) => void) {
  if (opts.watch || opts.each)
    throw new ScdError('USAGE', `--dry-run shows one commit, not those of --${opts.watch ? 'watch' : 'each'}`, { fix: `drop --${opts.watch ? 'watch' : 'each'}` });
  const common = { database: opts.db, noWait: opts.wait === false, waitMs: applyWait(opts), onProgress: progress, dryRun: true as const };
  let run: DryRun<ApplyResult | undefined>;
  let nothing = '';
  if (opts.input?.length) run = await apply(flow, { ...common, inputs: resolveInputs(opts.input, flow.source?.format).map((f) => f.path) });
  else {
    const source = await applySource(flow, common);
    for (const w of source.result.warnings) process.stderr.write(`scd: warning: ${w}\n`);
    run = { ...source, result: source.result.results[0] };
    nothing = nothingNew(source.result);
  }
  if (opts.json) return void process.stdout.write(JSON.stringify({ dryRun: true, statements: run.statements, result: run.result ?? null }) + '\n');
  const statements = run.statements.map((s) => `${statementText(s)}\n\n`).join('');
  process.stdout.write(`${statements}dry run: nothing was changed; ${run.result ? `it would have made ${summary(run.result)}` : nothing}\n`);
}

/**
 * What an apply that found nothing to apply says: how many files were applied before, and the
 * files that changed after they were applied (each named in a warning line above it), which are
 * never applied again.
 */
function nothingNew(report: { alreadyApplied: number; warnings: string[] }): string {
  const applied = `${plural(report.alreadyApplied, 'file')} already applied`;
  if (!report.warnings.length) return `nothing new to apply (${applied})`;
  const changed = report.warnings.length === 1 ? '1 file changed after it was applied and is' : `${report.warnings.length} files changed after they were applied and are`;
  return `nothing new to apply: ${changed} not applied again (see the warning above: put new changes in a new file); ${applied}`;
}

/** `apply` waits for a file another process holds, except with --no-wait. */
function applyWait(opts: { wait?: boolean }): number {
  return opts.wait === false ? 0 : FILE_WAIT_MS;
}

/**
 * `scd log`: every commit as a CommitResult, the schema `apply --json` prints (query/commit-log.ts).
 * NDJSON: one object a line; CSV: the same fields, inputs and expectations as JSON text; a table:
 * the compact view (log-view.ts). Parquet is not offered (a commit's inputs are a list).
 */
async function printLog(flowFile: string, opts: OutOpts): Promise<void> {
  const format = defaultFormat(opts.format, opts.out);
  if (format === 'parquet') throw new ScdError('USAGE', 'the commit log is written as a table, NDJSON or CSV, not Parquet', { fix: 'use --format ndjson or csv' });
  const flow = loadFlowFile(flowFile);
  checkDatabaseExists(flow, opts.db);
  const commits = await withDatabase(flow, { database: opts.db, ...wait }, (driver) => readCommitLog(driver, flow));
  let text: string;
  if (format === 'table') text = commits.length ? logView(commits) : '(no commits)\n';
  else if (format === 'csv') text = commitsCsv(commits);
  else text = commits.map((c) => JSON.stringify(c) + '\n').join('');
  if (opts.out) writeOutFile(opts.out, text);
  else process.stdout.write(text);
}

/** Run the CLI; errors a person can fix print one line and exit non-zero. */
export async function main(argv: string[]): Promise<void> {
  // A reader that stops early (`scd export … | head -1`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
  } catch (e) {
    process.exitCode = reportError(e);
  }
}

export function reportError(e: unknown): number {
  if (e instanceof ScdError) {
    process.stderr.write(`scd: ${e.oneLine()}\n`);
    return 1;
  }
  // The server went away (a restart, the session ended): nothing of scdkit's to fix.
  if (connectionLost(e)) {
    process.stderr.write(
      `scd: lost the connection to the database (${lostReason(e)}) (fix: run the command again once the server answers: each file is still applied exactly once)\n`,
    );
    return 1;
  }
  if (e instanceof QueryError) {
    process.stderr.write(`scd: the database refused a statement: ${e.reason}\n`);
    if (process.env.SCD_DEBUG) process.stderr.write(`${e.sql}\n`);
    else process.stderr.write('  (set SCD_DEBUG=1 to see the SQL; this is likely a bug in scdkit, please report it)\n');
    return 2;
  }
  process.stderr.write(`scd: unexpected error (a bug in scdkit, please report it):\n${e instanceof Error ? e.stack : String(e)}\n`);
  return 3;
}
