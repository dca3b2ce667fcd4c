import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { databaseOf } from '../api.js';
import { openDriver } from '../dialects/index.js';
import { ScdError } from '../errors.js';
import { loadFlowFile } from '../flow/load.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames } from '../store/names.js';
import { type DriverSource, driverPerRequest, duckdbFile, sharedDriver } from './database.js';
import { startServer } from './server.js';

export interface ServeCommandOptions {
  db?: string;
  port: string;
  host: string;
  open?: boolean;
}

/** `scd serve FLOW`: serve the read-only web app until SIGINT/SIGTERM, printing its URL. */
export async function serveCommand(flowFile: string, opts: ServeCommandOptions): Promise<void> {
  const flow = loadFlowFile(flowFile);
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ScdError('USAGE', `--port ${opts.port} is not a port`, { fix: 'give 0 to 65535 (0: any free port)' });
  const database = databaseOf(flow, { database: opts.db });
  if (database.startsWith(':memory:')) throw new ScdError('USAGE', 'an in-memory database has nothing to serve', { fix: "give the flow's database file or URL (--db)" });
  const isUrl = /^[a-z]+:\/\//i.test(database);
  // Opening a DuckDB file that is not there would create it: say so instead.
  if (!isUrl && !existsSync(database))
    throw new ScdError('NOT_APPLIED', `database ${database} does not exist`, { file: flow.origin, fix: 'run `scd apply` first (or check --db)' });
  // A DuckDB file is shared with writers in other processes by turns; a server, request by request.
  const source: DriverSource = /^pglite:\/\//i.test(database)
    ? sharedDriver(await openDriver(database, { schema: flow.schema }), true)
    : isUrl
      ? driverPerRequest(database, { schema: flow.schema })
      : duckdbFile(database, { schema: flow.schema });
  // The target must exist now (a wrong --db is said at once, not on the first page).
  try {
    await source.use(async (driver) => {
      if (!(await readFlowRecord(driver, storeNames(flow.target))))
        throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, { file: flow.origin, fix: 'run `scd apply` first (or check --db)' });
    });
  } catch (e) {
    await source.close();
    throw e;
  }
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer({ flow, source, port, host: opts.host });
  } catch (e) {
    await source.close();
    throw e;
  }
  // The signals are handled before the URL is printed: whoever reads the URL may stop the server
  // at once (before, Node's default for SIGTERM would end the process without closing it).
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.stdout.write(`scd: serving ${flow.target} at ${running.url} (read-only; Ctrl-C stops)\n`);
  if (opts.open) openBrowser(running.url);
  await stopped;
  await running.close();
  process.stderr.write('scd: stopped\n');
}

/** Open the URL in the desktop's browser; a machine without one gets a warning, not an error. */
function openBrowser(url: string): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => process.stderr.write(`scd: warning: could not open a browser (${cmd}); open ${url} yourself\n`));
    child.unref();
  } catch {
    process.stderr.write(`scd: warning: could not open a browser; open ${url} yourself\n`);
  }
}
