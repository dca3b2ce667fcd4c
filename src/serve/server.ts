import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames } from '../store/names.js';
import type { PageContext, PageResult } from './context.js';
import type { DriverSource } from './database.js';
import { type HostCheck, hostCheck } from './host-check.js';
import { type Html, html } from './html.js';
import { layout } from './layout.js';
import { route } from './routes.js';

export interface ServeOptions {
  flow: Flow;
  source: DriverSource;
  /** Default 0: a free port. */
  port?: number;
  /** Default 127.0.0.1 (loopback: only this machine). */
  host?: string;
  /** Rows per page of every table (default 100). */
  pageSize?: number;
  /** Where unexpected errors are reported (default stderr). */
  log?: (message: string) => void;
}

export interface RunningServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * Pages are plain HTML with inline CSS and SVG, and no script: the policy allows nothing else,
 * so even a value that slipped past escaping could not run.
 */
const HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-ancestors 'none'",
};

/** Start the read-only web app over a flow's database; resolves once it listens. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const log = options.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const hosts = hostCheck(host);
  const server = createServer((req, res) => {
    handle(options, hosts, req, res, log).catch((e) => {
      log(`scd serve: ${e instanceof Error ? e.stack : String(e)}`);
      if (!res.headersSent) res.writeHead(500, HEADERS);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    const refuse = (e: Error) => reject(listenError(e, host, options.port ?? 0));
    server.once('error', refuse);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', refuse);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/`,
    server,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await options.source.close();
    },
  };
}

/** Why the server could not listen, as one line with its fix (the port taken, the host not this machine's). */
function listenError(e: Error, host: string, port: number): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new ScdError('USAGE', `port ${port} on ${host} is in use by another program`, { fix: 'give another --port, or --port 0 for any free one' });
  if (code === 'EACCES')
    return new ScdError('USAGE', `port ${port} on ${host} needs privileges this user does not have`, { fix: 'give a --port above 1023, or --port 0 for any free one' });
  if (code === 'EADDRNOTAVAIL')
    return new ScdError('USAGE', `--host ${host} is not an address of this machine`, {
      fix: 'give one of its addresses: 127.0.0.1 (this machine only) or 0.0.0.0 (every network)',
    });
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    return new ScdError('USAGE', `--host ${host} is not an IP address, nor a name that resolves to one`, {
      fix: 'give an address of this machine: 127.0.0.1 (this machine only) or 0.0.0.0 (every network)',
    });
  return e;
}

/** A refusal in plain text: the request never reaches a page. */
function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { ...HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

async function handle(options: ServeOptions, hosts: HostCheck, req: IncomingMessage, res: ServerResponse, log: (m: string) => void): Promise<void> {
  // Before anything is read: a request for another host name (DNS rebinding) is not answered.
  if (!hosts.allows(req.headers.host)) {
    const asked = JSON.stringify(req.headers.host ?? '');
    refuse(
      res,
      421,
      `scd serve answers to ${hosts.names.join(', ')}; this request was for the host ${asked} (fix: open the URL scd serve printed, or start it with --host set to the name you use)`,
    );
    return;
  }
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...HEADERS, allow: 'GET, HEAD' });
    res.end();
    return;
  }
  if (url.pathname === '/favicon.ico') {
    res.writeHead(204);
    res.end();
    return;
  }
  const { flow } = options;
  const shell = { flow, keyColumns: flow.keys, url } as PageContext;
  const page = route(url.pathname);
  let status = 200;
  let document: Html;
  const headers: Record<string, string> = { ...HEADERS };
  // No engine stores a NUL in a text (PostgreSQL refuses the parameter): a value holding one finds nothing.
  const nul = [...url.searchParams].find(([k, v]) => k.includes('\0') || v.includes('\0'));
  if (nul) {
    status = 400;
    document = layout(
      shell,
      'Error',
      html`<h1>Error</h1><p class="error">The parameter ${nul[0].replace(/\0/g, '\\0')} holds a NUL character (%00), which no value can hold (fix: remove it from the URL)</p><p><a href="/">Overview</a></p>`,
    );
  } else if (!page) {
    status = 404;
    document = layout(shell, 'Not found', html`<h1>Not found</h1><p class="error">There is no page ${url.pathname}.</p><p><a href="/">Overview</a></p>`);
  } else {
    try {
      const result: PageResult = await options.source.use(async (driver) => {
        const record = await readFlowRecord(driver, storeNames(flow.target));
        if (!record) throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, { fix: 'run `scd apply` first, then reload' });
        return page({ driver, flow, record, keyColumns: flow.keys, url, pageSize: options.pageSize ?? 100 });
      });
      status = result.status ?? 200;
      document = layout(shell, result.title, result.body);
    } catch (e) {
      if (!(e instanceof ScdError)) log(`scd serve: ${url.pathname}${url.search}: ${e instanceof Error ? e.stack : String(e)}`);
      status = e instanceof ScdError ? statusOf(e) : 500;
      if (status === 503) headers['retry-after'] = '2';
      const message = e instanceof ScdError ? e.oneLine() : `unexpected error (a bug in scdkit, please report it): ${e instanceof Error ? e.message : String(e)}`;
      document = layout(
        shell,
        'Error',
        html`<h1>${status === 503 ? 'Busy' : 'Error'}</h1><p class="error">${message}</p>${status === 503 ? html`<p>Reload in a moment.</p>` : ''}<p><a href="/">Overview</a></p>`,
      );
    }
  }
  res.writeHead(status, headers);
  res.end(req.method === 'HEAD' ? undefined : document.text);
}

function statusOf(e: ScdError): number {
  if (e.code === 'DB_IN_USE') return 503;
  if (e.code === 'NOT_APPLIED') return 404;
  if (e.code === 'DB_UNREACHABLE') return 503;
  return 400;
}
