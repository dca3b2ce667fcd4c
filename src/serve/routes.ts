import type { PageContext, PageResult } from './context.js';
import { asOfPage } from './pages/as-of.js';
import { commitPage } from './pages/commit.js';
import { keyPage } from './pages/key.js';
import { overviewPage } from './pages/overview.js';
import { quarantinePage } from './pages/quarantine.js';

export type Page = (ctx: PageContext) => Promise<PageResult>;

/** The page a path names, or undefined (404). Each page has a stable URL a person can share. */
export function route(pathname: string): Page | undefined {
  if (pathname === '/') return overviewPage;
  if (pathname === '/key') return keyPage;
  if (pathname === '/quarantine') return quarantinePage;
  if (pathname === '/as-of') return asOfPage;
  const commit = /^\/commits\/(\d{1,9})$/.exec(pathname);
  if (commit) return (ctx) => commitPage(ctx, Number(commit[1]));
  return undefined;
}
