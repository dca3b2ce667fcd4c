import type { Driver } from '../dialects/driver.js';
import { type RowQuery, readRows, selectOf } from '../query/output.js';
import { type Html, href, html } from './html.js';

/**
 * A query narrowed by more conditions, their values bound as parameters after the query's own:
 * `narrow(q, (p) => [\`reason = ${p(value)}\`])`. Nothing a person typed is ever spliced into SQL.
 */
export function narrow(query: RowQuery, build: (param: (value: unknown) => string) => string[]): RowQuery {
  const params = [...(query.params ?? [])];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const conditions = build(param);
  const where = [...(query.where ? [`(${query.where})`] : []), ...conditions];
  return { ...query, where: where.length ? where.join(' AND ') : undefined, params };
}

export interface Page {
  rows: Array<Record<string, unknown>>;
  /** 1-based. */
  page: number;
  hasNext: boolean;
}

/** The last page number a URL may ask for: its OFFSET stays an INT (2^31 - 1) for any page size up to 1,000. */
const MAX_PAGE = 2_000_000;

/** The page number a URL asks for (1 when absent, not a positive integer, or beyond MAX_PAGE). */
export function pageNumber(url: URL, name = 'page'): number {
  const n = Number(url.searchParams.get(name));
  return Number.isSafeInteger(n) && n >= 1 && n <= MAX_PAGE ? n : 1;
}

/**
 * One page of a query's rows, read in the engine with LIMIT/OFFSET (one row more than the page,
 * to know whether a next page exists): a 10M-row table sends `size` rows, never all of them.
 */
export async function readPage(driver: Driver, query: RowQuery, page: number, size: number): Promise<Page> {
  const params = [...(query.params ?? [])];
  const n = params.length;
  // An INT, not a BIGINT: Spark takes only an integer of type INT in LIMIT and OFFSET.
  const int = driver.dialect.types.int;
  const rows = await readRows(driver, {
    columns: query.columns,
    from: `(${selectOf(driver, query)} LIMIT CAST($${n + 1} AS ${int}) OFFSET CAST($${n + 2} AS ${int})) pg`,
    params: [...params, size + 1, (page - 1) * size],
    orderBy: query.orderBy,
  });
  return { rows: rows.slice(0, size), page, hasNext: rows.length > size };
}

/** Links to the previous and next page, keeping the URL's other parameters. */
export function pager(url: URL, p: Page, name = 'page'): Html {
  const link = (n: number) => {
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    params[name] = String(n);
    return href(url.pathname, params);
  };
  if (p.page === 1 && !p.hasNext) return html``;
  return html`<nav class="pager">
${p.page > 1 ? html`<a rel="prev" href="${link(p.page - 1)}">← previous page</a>` : ''}
<span>page ${p.page}</span>
${p.hasNext ? html`<a rel="next" href="${link(p.page + 1)}">next page →</a>` : ''}
</nav>`;
}
