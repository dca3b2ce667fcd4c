import { Command, Option } from 'commander';
import { readFileSync } from 'node:fs';
import { apply, withDatabase } from '../api.js';
import { QueryError, ScdError } from '../errors.js';
import { loadFlowFile } from '../flow/load.js';
import type { ApplyResult } from '../plan/apply.js';
import { targetQuery } from '../query/export.js';
import { readRows, writeRows, type OutputFormat } from '../query/output.js';
import { resolveInputs, sourceInputs } from '../sources/files.js';
import { plural, renderTable } from './print.js';

type Format = OutputFormat | 'table';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function formatOption(): Option {
  return new Option('--format <format>', 'table, ndjson, csv or parquet (default: table on a terminal, else ndjson)').choices([
    'table',
    'ndjson',
    'csv',
    'parquet',
  ]);
}

function defaultFormat(format: Format | undefined, out: string | undefined): Format {
  if (format) return format;
  if (out) return out.endsWith('.csv') ? 'csv' : out.endsWith('.parquet') ? 'parquet' : 'ndjson';
  return process.stdout.isTTY ? 'table' : 'ndjson';
}

export function summary(r: ApplyResult): string {
  return (
    `commit ${r.version}: read ${plural(r.rowsRead, 'row')} = ${r.eventsApplied} applied + ${plural(r.duplicates, 'duplicate')} + ${r.quarantined} quarantined` +
    `${r.ties ? `; ${plural(r.ties, 'tie')}` : ''}; ${plural(r.keysAffected, 'key')} affected: ` +
    `${r.rowsInserted} inserted, ${r.rowsUpdated} updated, ${r.rowsDeleted} deleted, ${plural(r.versionsClosed, 'version')} closed (${r.durationMs} ms)`
  );
}

export function buildProgram(): Command {
  const program = new Command('scd')
    .description('Slowly changing dimensions (SCD type 2 and type 1) from change data, exactly')
    .version(version)
    .showHelpAfterError('(run `scd --help` for usage)');

  program
    .command('apply')
    .description('apply change records to the flow target as one atomic commit')
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .option('--input <file...>', 'input files (.ndjson, .jsonl, .json, .csv, .parquet) or folders; default: the flow\'s source.path')
    .option('--each', 'apply each input file as its own commit, in name order')
    .option('--json', 'print the result of each commit as one JSON line')
    .action(async (flowFile: string, opts: { db?: string; input?: string[]; each?: boolean; json?: boolean }) => {
      const flow = loadFlowFile(flowFile);
      const files = opts.input?.length ? resolveInputs(opts.input, flow.source?.format) : sourceInputs(flow);
      const batches = opts.each ? files.map((f) => [f.path]) : [files.map((f) => f.path)];
      for (const inputs of batches) {
        const result = await apply(flow, {
          database: opts.db,
          inputs,
          onProgress: opts.json ? undefined : (m) => process.stderr.write(`  ${m}\n`),
        });
        process.stdout.write(opts.json ? JSON.stringify(result) + '\n' : summary(result) + '\n');
      }
    });

  program
    .command('export')
    .description("write the target's rows, sorted by keys then start")
    .argument('<flow>', 'flow file (.yaml or .json)')
    .option('--db <path>', 'database file (default: the flow\'s "database")')
    .addOption(formatOption())
    .option('--out <path>', 'write to this file instead of stdout')
    .action(async (flowFile: string, opts: { db?: string; format?: Format; out?: string }) => {
      const flow = loadFlowFile(flowFile);
      const format = defaultFormat(opts.format, opts.out);
      await withDatabase(flow, { database: opts.db }, async (driver) => {
        const query = await targetQuery(driver, flow);
        if (format === 'table') {
          const rows = await readRows(driver, query);
          process.stdout.write(renderTable(query.columns.map((c) => c.name), rows));
        } else {
          await writeRows(driver, query, { format, out: opts.out });
        }
      });
    });
  return program;
}

/** Run the CLI; errors a person can fix print one line and exit non-zero. */
export async function main(argv: string[]): Promise<void> {
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
