import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import { readFlowRecord } from '../store/catalog.js';
import { storeNames } from '../store/names.js';
import type { PageContext, PageResult } from './context.js';
import type { DriverSource } from './database.js';
import { html, type Html } from './html.js';
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
  const server = createServer((req, res) => {
    handle(options, req, res, log).catch((e) => {
      log(`scd serve: ${e instanceof Error ? e.stack : String(e)}`);
      if (!res.headersSent) res.writeHead(500, HEADERS);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
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

async function handle(options: ServeOptions, req: IncomingMessage, res: ServerResponse, log: (m: string) => void): Promise<void> {
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
  if (!page) {
    status = 404;
    document = layout(shell, 'Not found', html`<h1>Not found</h1><p class="error">There is no page ${url.pathname}.</p><p><a href="/">Overview</a></p>`);
  } else {
    try {
      const result: PageResult = await options.source.use(async (driver) => {
        const record = await readFlowRecord(driver, storeNames(flow.target));
        if (!record)
          throw new ScdError('NOT_APPLIED', `target "${flow.target}" does not exist in ${driver.location} yet`, { fix: 'run `scd apply` first, then reload' });
        return page({ driver, flow, record, keyColumns: flow.keys, url, pageSize: options.pageSize ?? 100 });
      });
      status = result.status ?? 200;
      document = layout(shell, result.title, result.body);
    } catch (e) {
      if (!(e instanceof ScdError)) log(`scd serve: ${url.pathname}${url.search}: ${e instanceof Error ? e.stack : String(e)}`);
      status = e instanceof ScdError ? statusOf(e) : 500;
      if (status === 503) headers['retry-after'] = '2';
      const message = e instanceof ScdError ? e.oneLine() : `unexpected error (a bug in scdkit, please report it): ${e instanceof Error ? e.message : String(e)}`;
      document = layout(shell, 'Error', html`<h1>${status === 503 ? 'Busy' : 'Error'}</h1><p class="error">${message}</p>${status === 503 ? html`<p>Reload in a moment.</p>` : ''}<p><a href="/">Overview</a></p>`);
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
