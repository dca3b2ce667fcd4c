import { type Driver, FILE_COLUMN, LINE_COLUMN } from '../../dialects/driver.js';
import { ScdError } from '../../errors.js';
import type { Flow } from '../../flow/flow.js';
import { TMP } from '../../store/names.js';
import { COMMIT, OP, OP_TRUNCATE } from '../../store/target-columns.js';
import { DROP, logColumns, quarantineSql, REASON } from '../events-sql.js';
import { countExpectations } from '../expectations.js';
import type { ColumnModel } from '../model.js';
import { validSql } from '../new-events-sql.js';
import type { BatchFates, CommitContext, MappedBatch, StagedInput, TargetFound } from './commit-state.js';
import { countOf } from './count.js';

/**
 * From this many staged records a commit frees its intermediate tables as soon as they are used
 * (and turns its batch into the valid events by a rename): below it, that would cost more
 * statements than the memory it gives back is worth (docs/decisions/0056-scratch-is-freed-early-only-when-large.md).
 */
export const LARGE_COMMIT = 100_000;

/**
 * Each record's one fate, counted from the batch: quarantined (with its raw text, as are the
 * reader's rejects), dropped, or a valid event; the valid events each once in TMP.valid. The
 * counts must add up to the staged rows.
 */
export async function decideFates(ctx: CommitContext, flow: Flow, input: StagedInput, target: TargetFound, mapped: MappedBatch): Promise<BatchFates> {
  const { driver } = ctx;
  const d = driver.dialect;
  const q = d.quote;
  const { model, names, stagedRows } = mapped;
  const { version, rejected } = target;
  const expectations = await countExpectations(driver, flow);
  // Freeing memory early changes scratch tables in place (temporaryTables).
  const freeEarly = stagedRows >= LARGE_COMMIT && d.capabilities.temporaryTables;
  // The valid events, each once: a large batch finds its repeats first (a narrow aggregate) and
  // deduplicates only those; a small one deduplicates every row at once.
  const { dups, valid, distinct } = validSql(model, d);
  await driver.run(freeEarly ? dups : distinct);
  const fates = (
    await driver.query(
      `SELECT count(*) AS total, count(*) FILTER (WHERE ${q(REASON)} IS NOT NULL) AS quarantined,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND ${q(DROP)}) AS dropped, count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)}) AS ok,
         count(*) FILTER (WHERE ${q(REASON)} IS NULL AND NOT ${q(DROP)} AND ${q(OP)} = ${OP_TRUNCATE}) AS truncates,
         (SELECT count(*) FROM ${q(freeEarly ? TMP.dups : TMP.valid)}) AS made
       FROM ${q(TMP.batch)}`,
    )
  )[0]!;
  if (Number(fates.quarantined) > 0) await driver.run(quarantineSql(d, names, input.stagedTable), [version]);
  if (rejected > 0)
    await driver.run(
      `INSERT INTO ${q(names.quarantine)} (${q(COMMIT)}, file, line, reason, raw) SELECT CAST($1 AS ${d.types.int}), ${q(FILE_COLUMN)}, ${q(LINE_COLUMN)}, reason, raw FROM ${q(TMP.rejects)}`,
      [version],
    );
  // The staged rows are mapped (and the unfit ones quarantined with their raw text): free them.
  if (freeEarly) await driver.dropTemporary([TMP.stage, TMP.rejects], [], { madeBefore: true });
  const quarantined = rejected + Number(fates.quarantined);
  const dropped = Number(fates.dropped);
  const okRecords = Number(fates.ok);
  if (Number(fates.total) !== stagedRows || Number(fates.total) !== Number(fates.quarantined) + dropped + okRecords)
    throw new ScdError(
      'NOT_APPLIED',
      `${stagedRows} records were staged but ${fates.total} mapped (${fates.quarantined} quarantined, ${dropped} dropped, ${okRecords} valid); nothing was applied`,
      {
        file: flow.origin,
        fix: 'this is a bug in scdkit: please report it with the input file',
      },
    );
  // A large batch's valid events are made now, from its repeats (freeEarly).
  const validEvents = freeEarly
    ? await validEventsOfLargeBatch(driver, model, valid, quarantined === rejected && dropped === 0 && Number(fates.made) === 0, okRecords)
    : Number(fates.made);
  return { expectations, freeEarly, quarantined, dropped, okRecords, validEvents, truncated: Number(fates.truncates) > 0 };
}

/**
 * A large batch's valid events in TMP.valid, its intermediate tables freed; returns how many.
 * `batchIsValid`: every record is a valid event, once (no repeats, none quarantined or dropped).
 */
async function validEventsOfLargeBatch(driver: Driver, model: ColumnModel, validSqlText: string, batchIsValid: boolean, okRecords: number): Promise<number> {
  const q = driver.dialect.quote;
  if (batchIsValid) {
    // The batch becomes the valid events by a rename, its other columns dropped (which frees them,
    // as the copy would).
    const keep = new Set(logColumns(model));
    const extra = ((await driver.columns(TMP.batch)) ?? []).filter((c) => !keep.has(c.name));
    for (const c of extra) await driver.run(`ALTER TABLE ${q(TMP.batch)} DROP COLUMN ${q(c.name)}`);
    await driver.run(`ALTER TABLE ${q(TMP.batch)} RENAME TO ${q(TMP.valid)}`);
  } else await driver.run(validSqlText);
  // Intermediate tables go as soon as they are used (a large commit keeps to its memory).
  await driver.dropTemporary([TMP.batch, TMP.dups]);
  // Valid events: the valid records less the batch's repeats (each set of equal ones stays once).
  return batchIsValid ? okRecords : await countOf(driver, `SELECT count(*) FROM ${q(TMP.valid)}`);
}
