import type { Driver } from '../dialects/driver.js';
import type { Flow } from '../flow/flow.js';
import type { FlowRecord } from '../store/catalog.js';

/** What a page is rendered from: one request's driver, the flow and its stored model, the URL. */
export interface PageContext {
  driver: Driver;
  flow: Flow;
  record: FlowRecord;
  keyColumns: string[];
  url: URL;
  /** Rows per page of every paged table (the server never reads more, plus one to see a next page). */
  pageSize: number;
}

/** A page's answer: its HTTP status (200 unless said) and its document. */
export interface PageResult {
  status?: number;
  title: string;
  body: import('./html.js').Html;
}
