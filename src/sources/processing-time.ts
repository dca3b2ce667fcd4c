import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { type Flow, PROCESSING_TIME_COLUMN } from '../flow/flow.js';
import { TMP } from '../store/names.js';
import type { LexicalColumns } from '../typing/lexical.js';

/**
 * `sequenceBy: { processingTime: … }` (docs/FLOWS.md "Processing time"): every record a commit
 * stages gets, in the flow's processing column, one value: the commit's time (a timestamp with
 * time zone) or its date in the flow's time zone (`processingTime: date`), which is then its
 * sequence. The commits of a target stamp increasing times as long as the clock does not go back;
 * records of one key within one commit share their sequence and are ties (SEMANTICS §3).
 *
 * The column is PROCESSING_TIME_COLUMN, added to every record (a source column of that name is
 * refused); or a source column (`sequenceBy.column`), where a record that holds a value keeps it
 * (a dated load) and only the others are stamped.
 */
export async function stampProcessingTime(driver: Driver, flow: Flow, at: Date = new Date(), lexical: LexicalColumns = new Map()): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  const column = flow.processingColumn;
  const staged = (await driver.columns(TMP.stage)) ?? [];
  const found = staged.find((c) => c.name.toLowerCase() === column.toLowerCase());
  if (found && column === PROCESSING_TIME_COLUMN)
    throw new ScdError('SOURCE_INVALID', `the source has a column "${PROCESSING_TIME_COLUMN}", the one a processing-time flow adds`, {
      file: flow.origin,
      field: 'sequenceBy',
      fix: `rename or drop that column in the source, or give sequenceBy a column of the source`,
    });
  const value = flow.processingGrain === 'date' ? dateIn(flow.timeZone, at) : at.toISOString();
  const type = flow.processingGrain === 'date' ? d.types.date : d.types.timestamptz;
  if (!d.capabilities.temporaryTables) return restage(driver, flow, staged, found, value, type, lexical);
  // A quoted constant: DuckDB parses a bare non-text DEFAULT in ADD COLUMN as several statements.
  if (!found) {
    await driver.run(`ALTER TABLE ${q(TMP.stage)} ADD COLUMN ${q(column)} ${type} DEFAULT '${value}'`);
    return;
  }
  // The records without a value of their own take the commit's, written as the column holds its
  // values: a JSON string (NDJSON), text (CSV), or the reader's own type (Parquet).
  const how = lexical.get(found.name);
  const literal = how === 'json' ? `'"${value}"'` : `'${value}'`;
  const missing = how === 'json' ? `${q(found.name)} IS NULL OR ${d.toText(q(found.name))} = 'null'` : `${q(found.name)} IS NULL`;
  await driver.run(`UPDATE ${q(TMP.stage)} SET ${q(found.name)} = CAST(${literal} AS ${found.type}) WHERE ${missing}`);
}

/**
 * The same stamping where the staged rows are a scratch relation that takes no ALTER or UPDATE
 * (Spark: a cached view): the staged relation is moved aside and made anew from it, the
 * processing column added, or its missing values filled, in the one SELECT.
 */
async function restage(driver: Driver, flow: Flow, staged: ColumnInfo[], found: ColumnInfo | undefined, value: string, type: string, lexical: LexicalColumns): Promise<void> {
  const d = driver.dialect;
  const q = d.quote;
  const unstamped = `${TMP.stage}_unstamped`;
  await driver.run(d.moveScratch(TMP.stage, unstamped));
  const columns = staged.map((c) => {
    if (c !== found) return q(c.name);
    const json = lexical.get(c.name) === 'json';
    const missing = json ? `${q(c.name)} IS NULL OR ${d.toText(q(c.name))} = 'null'` : `${q(c.name)} IS NULL`;
    return `CASE WHEN ${missing} THEN CAST(${json ? `'"${value}"'` : `'${value}'`} AS ${c.type}) ELSE ${q(c.name)} END AS ${q(c.name)}`;
  });
  if (!found) columns.push(`CAST('${value}' AS ${type}) AS ${q(flow.processingColumn)}`);
  await driver.run(d.scratch(TMP.stage, `SELECT ${columns.join(', ')} FROM ${q(unstamped)}`));
}

/** The calendar date of an instant in a time zone, as YYYY-MM-DD. */
function dateIn(timeZone: string, at: Date): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${part('year')}-${part('month')}-${part('day')}`;
}
