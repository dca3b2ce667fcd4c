import { Command, InvalidArgumentError, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { apply, applySource, applySourceWith, withDatabase } from '../api.js';
import { QueryError, ScdError } from '../errors.js';
import type { Driver } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import { loadFlowFile } from '../flow/load.js';
import type { ApplyResult } from '../plan/apply.js';
import { rebuild } from '../plan/rebuild.js';
import { compact } from '../plan/compact.js';
import { statementText, type DryRun } from '../plan/dry-run.js';
import { targetQuery } from '../query/export.js';
import { asOfQuery, changesQuery, commitLogQuery, keyHistoryQuery, quarantineQuery, versionQuery } from '../query/history.js';
import { readRows, writeRows, type OutputFormat, type RowQuery } from '../query/output.js';
import { resolveInputs } from '../sources/files.js';
import { serveCommand } from '../serve/command.js';
import { plural, renderTable } from './print.js';

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
    .addOption(
      new Option('--format <format>', 'table, ndjson, csv or parquet (default: table on a terminal, else ndjson)').choices([
        'table',
        'ndjson',
        'csv',
        'parquet',
      ]),
    )
    .option('--out <path>', 'write to this file instead of stdout');
}

function defaultFormat(format: Format | undefined, out: string | undefined): Format {
  if (format) return format;
  if (out) return out.endsWith('.csv') ? 'csv' : out.endsWith('.parquet') ? 'parquet' : 'ndjson';
  return process.stdout.isTTY ? 'table' : 'ndjson';
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a commit version: 1, 2, ...');
  return n;
}

/** Run a read-only command: open the flow's database, build the query, print it. */
async function printQuery(flowFile: string, opts: OutOpts, build: (driver: Driver, flow: Flow) => Promise<RowQuery>): Promise<void> {
  const flow = loadFlowFile(flowFile);
  const format = defaultFormat(opts.format, opts.out);
  await withDatabase(flow, { database: opts.db }, async (driver) => {
    const query = await build(driver, flow);
    await printRows(driver, query, format, opts.out);
  });
}

async function printRows(driver: Driver, query: RowQuery, format: Format, out?: string): Promise<void> {
  if (format === 'table') {
    const rows = await readRows(driver, query);
    const text = renderTable(query.columns.map((c) => c.name), rows);
    if (out) (await import('node:fs')).writeFileSync(out, text);
    else process.stdout.write(rows.length ? text : '(no rows)\n');
  } else {
    await writeRows(driver, query, { format, out });
  }
}

export function summary(r: ApplyResult): string {
  const what = r.operation === 'apply' ? `read ${plural(r.rowsRead, 'row')} = ${r.eventsApplied} applied + ${plural(r.duplicates, 'duplicate')} + ${r.quarantined} quarantined${r.ties ? `; ${plural(r.ties, 'tie')}` : ''}; ` : `${r.operation}: `;
  return (
    `commit ${r.version}: ${what}${plural(r.keysAffected, 'key')} affected: ` +
    `${r.rowsInserted} inserted, ${r.rowsUpdated} updated, ${r.rowsDeleted} deleted, ${plural(r.versionsClosed, 'version')} closed (${r.durationMs} ms)`
  );
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
    .action(async (flowFile: string, opts: { db?: string; input?: string[]; each?: boolean; watch?: boolean; interval: string; json?: boolean; wait?: boolean; dryRun?: boolean }) => {
      const flow = loadFlowFile(flowFile);
      const progress = opts.json ? undefined : (m: string) => process.stderr.write(`  ${m}\n`);
      const print = (result: ApplyResult) => process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : summary(result) + '\n');
      if (opts.dryRun) return printDryRun(flow, opts, progress);
      if (opts.input?.length) {
        if (opts.watch) throw new ScdError('USAGE', '--watch follows the flow\'s source.path, not --input files', { fix: 'drop --input' });
        const files = resolveInputs(opts.input, flow.source?.format);
        const batches = opts.each ? files.map((f) => [f.path]) : [files.map((f) => f.path)];
        for (const inputs of batches) print(await apply(flow, { database: opts.db, noWait: opts.wait === false, inputs, onProgress: progress }));
        return;
      }
      if (!opts.watch) {
        const report = await applySource(flow, { database: opts.db, noWait: opts.wait === false, each: opts.each, onProgress: progress, onCommit: print });
        for (const w of report.warnings) process.stderr.write(`scd: warning: ${w}\n`);
        if (!report.results.length && !opts.json)
          process.stdout.write(`nothing new to apply (${plural(report.alreadyApplied, 'file')} already applied)\n`);
        return;
      }
      await watch(flow, opts.db, Number(opts.interval) * 1000, !!opts.each, progress, print);
    });

  outputOptions(
    program
      .command('export')
      .description("write the target's rows, sorted by keys then start")
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--version <n>', 'the target as it stood after commit N (time travel)', positiveInt),
  ).action((flowFile: string, opts: OutOpts & { version?: number }) =>
    printQuery(flowFile, opts, (driver, flow) => (opts.version ? versionQuery(driver, flow, opts.version) : targetQuery(driver, flow))),
  );

  outputOptions(
    program
      .command('log')
      .description('the commit log, newest first')
      .argument('<flow>', 'flow file (.yaml or .json)')
      .option('--json', 'NDJSON, for machines (same as --format ndjson)'),
  ).action((flowFile: string, opts: OutOpts & { json?: boolean }) =>
    printQuery(flowFile, { ...opts, format: opts.json ? 'ndjson' : opts.format }, commitLogQuery),
  );

  outputOptions(
    program
      .command('changes')
      .description("the change data feed: rows each commit changed, with _change_type, _commit_version, _commit_timestamp")
      .argument('<flow>', 'flow file (.yaml or .json)')
      .requiredOption('--from-version <n>', 'first commit', positiveInt)
      .option('--to-version <m>', 'last commit (default: the latest)', positiveInt),
  ).action((flowFile: string, opts: OutOpts & { fromVersion: number; toVersion?: number }) =>
    printQuery(flowFile, opts, (driver, flow) => changesQuery(driver, flow, opts.fromVersion, opts.toVersion)),
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
      key[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return printQuery(flowFile, opts, (driver, flow) => keyHistoryQuery(driver, flow, key));
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
    const flow = loadFlowFile(flowFile);
    await withDatabase(flow, { database: opts.db }, async (driver) => {
      const rows = await readRows(driver, await quarantineQuery(driver, flow, opts.commit));
      const text = rows.map((r) => `${r.raw}\n`).join('');
      if (opts.out) (await import('node:fs')).writeFileSync(opts.out, text);
      else process.stdout.write(text);
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
      const r = await withDatabase(flow, { database: opts.db }, (driver) =>
        compact(driver, flow, opts.before, opts.json ? undefined : (m) => process.stderr.write(`  ${m}\n`)),
      );
      process.stdout.write(
        opts.json ? JSON.stringify(r) + '\n' : `commit ${r.version}: compact: ${plural(r.eventsFolded, 'event')} before ${opts.before} folded into ${r.eventsWritten} (${r.durationMs} ms)\n`,
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
      const result = await withDatabase(flow, { database: opts.db }, (driver) =>
        rebuild(driver, flow, opts.json ? undefined : (m) => process.stderr.write(`  ${m}\n`)),
      );
      process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : summary(result) + '\n');
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
  if (opts.watch || opts.each) throw new ScdError('USAGE', `--dry-run shows one commit, not those of --${opts.watch ? 'watch' : 'each'}`, { fix: `drop --${opts.watch ? 'watch' : 'each'}` });
  const common = { database: opts.db, noWait: opts.wait === false, onProgress: progress, dryRun: true as const };
  let run: DryRun<ApplyResult | undefined>;
  let nothing = '';
  if (opts.input?.length) run = await apply(flow, { ...common, inputs: resolveInputs(opts.input, flow.source?.format).map((f) => f.path) });
  else {
    const source = await applySource(flow, common);
    for (const w of source.result.warnings) process.stderr.write(`scd: warning: ${w}\n`);
    run = { ...source, result: source.result.results[0] };
    nothing = `nothing new to apply (${plural(source.result.alreadyApplied, 'file')} already applied)`;
  }
  if (opts.json) return void process.stdout.write(JSON.stringify({ dryRun: true, statements: run.statements, result: run.result ?? null }) + '\n');
  const statements = run.statements.map((s) => `${statementText(s)}\n\n`).join('');
  process.stdout.write(`${statements}dry run: nothing was changed; ${run.result ? `it would have made ${summary(run.result)}` : nothing}\n`);
}

/** Apply new files as they land until SIGINT/SIGTERM; a commit in progress always finishes. */
async function watch(flow: Flow, db: string | undefined, intervalMs: number, each: boolean, progress: ((m: string) => void) | undefined, print: (r: ApplyResult) => void) {
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new ScdError('USAGE', '--interval must be a positive number of seconds', { fix: 'e.g. --interval 2' });
  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    if (!stopping) process.stderr.write('scd: stopping (a commit in progress finishes first)\n');
    stopping = true;
    wake?.();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const warned = new Set<string>();
  process.stderr.write(`scd: watching ${flow.source?.path ?? '(no source.path)'} every ${intervalMs / 1000}s; Ctrl-C stops\n`);
  try {
    await withDatabase(flow, { database: db }, async (driver) => {
      while (!stopping) {
        // Files must be at least one interval old: a writer may still be writing a newer one.
        const report = await applySourceWith(driver, flow, { each, onProgress: progress, onCommit: print, minAgeMs: Math.min(intervalMs, 1000) });
        for (const w of report.warnings) if (!warned.has(w)) (warned.add(w), process.stderr.write(`scd: warning: ${w}\n`));
        if (stopping) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, intervalMs);
        });
      }
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
  process.stderr.write('scd: stopped\n');
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
  if (e instanceof QueryError) {
    process.stderr.write(`scd: the database refused a statement: ${e.reason}\n`);
    if (process.env.SCD_DEBUG) process.stderr.write(`${e.sql}\n`);
    else process.stderr.write('  (set SCD_DEBUG=1 to see the SQL; this is likely a bug in scdkit, please report it)\n');
    return 2;
  }
  process.stderr.write(`scd: unexpected error (a bug in scdkit, please report it):\n${e instanceof Error ? e.stack : String(e)}\n`);
  return 3;
}
