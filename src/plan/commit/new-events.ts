import type { Dialect } from '../../dialects/dialect.js';
import { ScdError } from '../../errors.js';
import { INTERNAL_COLUMN_PREFIX } from '../../files/source-keys.js';
import type { Flow } from '../../flow/flow.js';
import { TMP } from '../../store/names.js';
import { SLOW } from '../keys-sql.js';
import type { ColumnModel } from '../model.js';
import { freshSql, knownSql, slowLogSql, tiesSql } from '../new-events-sql.js';
import type { BatchFates, CommitContext, KeyCounts, MappedBatch, NewEvents, StagedInput } from './commit-state.js';
import { countOf } from './count.js';

/**
 * The events the log does not hold yet (TMP.newEvents), with the slow keys' logged events read
 * once (TMP.slowLog: the walk and the deduplication read them; a batch of simple keys reads
 * nothing of the log). Every record read is then applied, a duplicate, quarantined, dropped or
 * skipped: the counts must add up.
 */
export async function findNewEvents(ctx: CommitContext, flow: Flow, input: StagedInput, mapped: MappedBatch, fates: BatchFates, keys: KeyCounts): Promise<NewEvents> {
  const d = ctx.driver.dialect;
  // Where scratch cannot change in place (Spark), a batch with slow keys makes its new events
  // anew and counts them, their ties and the keys with news in one query.
  const news =
    !d.capabilities.temporaryTables && !fates.truncated && keys.slow > 0
      ? await newEventsMadeAnew(ctx, flow, mapped, keys)
      : await newEventsInPlace(ctx, flow, mapped, fates, keys);
  if (fates.truncated && fates.freeEarly) await ctx.driver.dropTemporary([TMP.valid]);
  // Duplicates, counted: records equal to another of the batch, events the log already holds,
  // and a snapshot's unchanged rows.
  const duplicates = fates.okRecords - fates.validEvents + (fates.validEvents - news.applied) + mapped.unchanged;
  const { rowsRead } = mapped;
  const { quarantined, dropped } = fates;
  if (rowsRead !== news.applied + duplicates + quarantined + dropped + input.skipped)
    throw new ScdError(
      'NOT_APPLIED',
      `${rowsRead} records read but ${news.applied} applied + ${duplicates} duplicates + ${quarantined} quarantined + ${dropped} dropped + ${input.skipped} skipped; nothing was applied`,
      {
        file: flow.origin,
        fix: 'this is a bug in scdkit: please report it with the input file',
      },
    );
  return { ...news, duplicates };
}

/**
 * Without truncates the valid events are new but those of slow keys the log holds already (a fast
 * key's events all come after what was applied): those go, and the valid events become the new
 * ones by a rename, not a copy. With truncates they are made anew.
 */
async function newEventsInPlace(ctx: CommitContext, flow: Flow, mapped: MappedBatch, fates: BatchFates, keys: KeyCounts): Promise<Omit<NewEvents, 'duplicates'>> {
  const { driver } = ctx;
  const d = driver.dialect;
  const { model, names } = mapped;
  let logged = 0;
  if (fates.truncated || keys.walked > 0) {
    await driver.run(slowLogSql(model, d, names));
    if (keys.slow > 0) logged = await countOf(driver, `SELECT count(*) FROM ${d.quote(TMP.slowLog)}`);
  }
  if (fates.truncated) await driver.run(freshSql(model, d, names, { truncates: flow.applyAsTruncates !== undefined }));
  else {
    if (logged > 0) await driver.run(knownSql(model, d));
    await driver.run(d.renameScratch(TMP.valid, TMP.newEvents));
  }
  const applied = fates.truncated || logged > 0 ? await countOf(driver, `SELECT count(*) FROM ${d.quote(TMP.newEvents)}`) : fates.validEvents;
  return { applied };
}

/** The new events made anew from the valid ones, counted with their ties and the keys with news in one query. */
async function newEventsMadeAnew(ctx: CommitContext, flow: Flow, mapped: MappedBatch, keys: KeyCounts): Promise<Omit<NewEvents, 'duplicates'>> {
  const { driver } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  const { model, names } = mapped;
  const truncates = flow.applyAsTruncates !== undefined;
  if (keys.walked > 0) await driver.run(slowLogSql(model, d, names));
  await driver.run(freshSql(model, d, names, { truncates }));
  // Only a walked (not simple) key's events can tie.
  const ties = keys.walked > 0 ? `(${tiesSql(model, d, names, { truncates })})` : '0';
  const row = (await driver.query(`SELECT (SELECT count(*) FROM ${q(TMP.newEvents)}) AS applied, ${ties} AS ties, (${keysWithNewsSql(d, model)}) AS keys`))[0]!;
  return { applied: Number(row.applied), counted: { ties: Number(row.ties), keysWithNews: Number(row.keys) } };
}

/** A query of how many keys of TMP.keys have a new event (a slow key may have none). */
function keysWithNewsSql(d: Dialect, model: ColumnModel): string {
  const q = d.quote;
  // An outer alias no column may have (new-events-sql.ts freshSql).
  const k = q(`${INTERNAL_COLUMN_PREFIX}k`);
  const on = model.keys.map((c) => `n.${q(c.name)} = ${k}.${q(c.name)}`).join(' AND ');
  return `SELECT count(*) AS n FROM ${q(TMP.keys)} ${k} WHERE NOT ${k}.${q(SLOW)} OR EXISTS (SELECT 1 FROM ${q(TMP.newEvents)} n WHERE ${on})`;
}
