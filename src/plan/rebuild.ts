import type { Driver } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';
import { settleDebezium } from '../flow/debezium-positions.js';
import type { Flow } from '../flow/flow.js';
import type { FlowRecord } from '../store/catalog.js';
import { ensureCatalog } from '../store/catalog.js';
import { type CommitResult, emptyCommit, recordCommit } from '../store/commits.js';
import { ensureFeedColumns, materializeFeed, writtenShape } from '../store/feed.js';
import { storeNames, TMP } from '../store/names.js';
import { COMMIT, HASH, OP } from '../store/target-columns.js';
import type { Progress } from './apply.js';
import { beginRecordedCommit } from './begin-recorded.js';
import { reportDiskFull } from './disk-full.js';
import { FOLDED_COMMIT, logColumns, relogSelectSql } from './events-sql.js';
import { checkExpressions, checkSpelling } from './expression.js';
import { createStateSql } from './key-state.js';
import { rebuiltStateSql } from './key-state-sql.js';
import { keysSql } from './keys-sql.js';
import { deriveModel } from './model.js';
import { checkColumnNames } from './name-clashes.js';
import { checkFlowNames } from './name-limits.js';
import { type ChangeCounts, NO_CHANGES, recompute, walkKeys } from './recompute.js';
import { checkLogEvaluates } from './record-failures.js';
import { withScratch } from './scratch.js';
import { changedSettings, semanticSettings } from './settings.js';
import { checkEndSentinel, currentViewSql, targetColumns } from './target.js';
import { eventsSql, LOG_VIEW } from './walk-input-sql.js';
import { CURRENT } from './walk-sql.js';

/**
 * Recompute the whole target from the kept events under the flow as it is now (a full refresh):
 * operations and payload identity are re-derived from the stored source columns, so a change of
 * trackHistory, columns or output options takes effect over all history. One commit; the change
 * feed records exactly the rows that changed.
 *
 * On an engine without transactions (Spark + Delta) it is a commit like an apply's
 * (execute/delta/delta-executor.ts): under the target's lease, an interrupted commit undone first, each
 * write labelled with the commit's number, the target changed by one MERGE, the record last; a
 * rebuild there keeps the target's columns and identity (one that would change them is refused
 * before anything is written).
 */
export async function rebuild(driver: Driver, flow: Flow, progress: Progress = () => {}): Promise<CommitResult> {
  const started = Date.now();
  let names = storeNames(flow.target);
  const d = driver.dialect;
  const q = d.quote;
  checkSpelling(flow);
  checkFlowNames(flow, driver.dialect);
  await ensureCatalog(driver, names);
  // A full disk undoes the rebuild whole, and says so in one line (disk-full.ts).
  return withScratch(driver, () =>
    reportDiskFull(driver, flow, 'rebuild', () =>
      driver.transaction(async () => {
        // Read as of the rebuild's start; written by the names begun.names gives (Spark: pinned reads).
        const begun = await beginRecordedCommit(driver, flow, names, progress, 'run `scd apply` first (or check --db)');
        const { record, version, hadTies } = begun;
        flow = settleDebezium(
          flow,
          record.model.source.map((c) => c.name),
        );
        const model = deriveModel(flow, record.model.source);
        // The log is re-derived with the flow's expressions: the engine's verdict on them first.
        await checkExpressions(driver, flow, model.source);
        checkColumnNames(flow, model, d);
        await checkEndSentinel(driver, flow, model);
        const at = new Date().toISOString();

        const before = (await driver.columns(names.target)) ?? [];
        const after = targetColumns(flow, model, d);
        const sameIdentity = ['keys', 'sequenceBy', 'storedAs'].every((k) => JSON.stringify(record.settings[k]) === JSON.stringify(semanticSettings(flow)[k]));
        const sameShape = sameIdentity && before.length === after.length && before.every((c, i) => c.name === after[i]!.name && d.sameType(c.type, after[i]!.type));
        const executor = executorFor(d);
        // Without a transaction, a rebuild changes the target by one MERGE: by identity, in the same columns.
        if (!sameShape && !executor.guarantees.transactions)
          throw new ScdError(
            'USAGE',
            `scd rebuild cannot change the target's columns or identity on ${d.name} yet (this flow changes ${sameIdentity ? 'its columns' : 'its keys, sequence or storedAs'})`,
            {
              file: flow.origin,
              fix: 'apply the inputs again to a new target (a new `target` name), or restore the previous flow setting',
            },
          );
        names = begun.names;

        // The log is re-derived when what it derives from changed: the identity (keys, sequence),
        // the operations, or the payload its hashes cover. Otherwise it already is its own re-derivation.
        const logChanged =
          changedSettings(record.settings, semanticSettings(flow)).some((k) => ['keys', 'sequenceBy', 'applyAsDeletes', 'applyAsTruncates'].includes(k)) ||
          JSON.stringify(model.payload.map((c) => c.name)) !== JSON.stringify(record.model.payload.map((c) => c.name));
        if (logChanged) {
          progress('re-deriving the event log under the current flow');
          await checkLogEvaluates(driver, flow, names.events, `${q(COMMIT)} = ${FOLDED_COMMIT}`);
          names = await executor.replaceLog(driver, names, { select: relogSelectSql(flow, model, d, names.events), columns: [...logColumns(model), COMMIT].map(q) });
        }

        // Every key is recomputed from the log: no batch, no fresh events, all keys slow.
        const logList = [...model.source.map((c) => c.name), OP, HASH].map(q).join(', ');
        await driver.run(driver.dialect.scratch(TMP.valid, `SELECT ${logList} FROM ${q(names.events)} WHERE false`));
        await driver.run(driver.dialect.scratch(TMP.newEvents, `SELECT ${logList} FROM ${q(names.events)} WHERE false`));
        await driver.run(keysSql(flow, model, d, names, { allSlow: true }));
        // Every key is slow: the walk reads the log itself (no copy of it).
        const keys = Number((await driver.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${q(TMP.keys)}`))[0]!.n);
        progress(`recomputing the history of ${keys} keys`);

        // The key state is rebuilt from scratch.
        await executor.emptyState(driver, names, createStateSql(model, d, names));
        let counts: ChangeCounts = NO_CHANGES;
        // Ties are likely where a commit counted some; elsewhere the walk finds them itself (a log
        // re-derived under a changed flow may tie where no commit counted a tie: recompute.ts walkKeys).
        const mayTie = hadTies;
        if (sameShape) {
          counts = await recompute(driver, flow, model, names, version, at, { wholeLog: true, mayTie });
        } else {
          await driver.run(eventsSql(flow, model, d, names, { fastKeys: false, wholeLog: true }));
          await walkKeys(driver, flow, model, LOG_VIEW, mayTie);
          counts = await reshape(driver, flow, model, names, version, at, record);
          for (const sql of rebuiltStateSql(flow, model, d, names)) await driver.run(sql);
        }
        await driver.run(`DROP VIEW IF EXISTS ${q(names.current)}`);
        await driver.run(currentViewSql(flow, model, d, names));
        await executor.writeFlowRecord(driver, names, { model, settings: semanticSettings(flow), compactedBefore: record.compactedBefore }, at);
        const result: CommitResult = {
          ...emptyCommit(version, 'rebuild', at),
          ...counts,
          durationMs: Date.now() - started - begun.waited,
        };
        await recordCommit(driver, names, result);
        return result;
      }),
    ),
  );
}

/**
 * The target's columns change: every old row leaves through the change feed as a delete, the
 * table is recreated, every new row enters as an insert. The feed gains the new columns.
 */
async function reshape(
  driver: Driver,
  flow: Flow,
  model: ReturnType<typeof deriveModel>,
  names: ReturnType<typeof storeNames>,
  version: number,
  at: string,
  record: FlowRecord,
): Promise<ChangeCounts> {
  const stored = record.settings;
  const d = driver.dialect;
  const q = d.quote;
  const before = (await driver.columns(names.target)) ?? [];
  const after = targetColumns(flow, model, d);
  const feed = (await driver.columns(names.changes)) ?? [];
  const oldList = before.map((c) => q(c.name)).join(', ');
  const ts = `CAST($2 AS ${d.types.timestamptz})`;
  const ver = `CAST($1 AS ${d.types.int})`;
  const oldKeyList = record.model.keys.map((k) => q(k.name)).join(', ');
  const old = (
    await driver.query(
      `SELECT CAST(count(*) AS INTEGER) AS n, (SELECT CAST(count(*) AS INTEGER) FROM (SELECT DISTINCT ${oldKeyList} FROM ${q(names.target)}) k) AS keys FROM ${q(names.target)}`,
    )
  )[0]!;
  const deleted = Number(old.n);
  await driver.run(
    `INSERT INTO ${q(names.changes)} (${oldList}, _change_type, _commit_version, _commit_timestamp) SELECT ${oldList}, 'delete', ${ver}, ${ts} FROM ${q(names.target)}`,
    [version, at],
  );
  for (const sql of d.prepareTypes(after.map((c) => c.type))) await driver.run(sql);
  for (const c of after) {
    const had = feed.find((f) => f.name === c.name);
    if (!had) await driver.run(`ALTER TABLE ${q(names.changes)} ADD COLUMN ${q(c.name)} ${c.type}`);
    else if (!d.sameType(had.type, c.type))
      throw new ScdError('SCHEMA_CHANGE', `column "${c.name}" would change type from ${had.type} to ${c.type}`, {
        file: flow.origin,
        fix: 'rename the column in the flow output, or start a new target',
      });
  }
  await ensureFeedColumns(driver, flow, names, after);
  // References resolve by the old identity against the old target: they become full rows before
  // the target goes (after the feed's new columns: DuckDB refuses to commit an ALTER TABLE after
  // a DELETE from the table in one transaction).
  await materializeFeed(
    driver,
    names,
    writtenShape(
      record,
      before.map((c) => c.name),
    ),
    TMP.materialized,
  );
  // A renamed output column (start, end, ...) keeps its values in the feed's older rows, so that
  // time travel before the rename still shows them under the new name.
  for (const field of ['startAtColumn', 'endAtColumn', 'isCurrentColumn', 'surrogateKey', 'deletedColumn'] as const) {
    const was = stored[field];
    const now = flow[field];
    if (typeof was === 'string' && typeof now === 'string' && was !== now && feed.some((f) => f.name === was))
      await driver.run(`UPDATE ${q(names.changes)} SET ${q(now)} = ${q(was)} WHERE ${q(now)} IS NULL`);
  }
  await driver.run(`DROP VIEW IF EXISTS ${q(names.current)}`);
  await driver.run(`DROP TABLE ${q(names.target)}`);
  await driver.run(`CREATE TABLE ${q(names.target)} (${after.map((c) => `${q(c.name)} ${c.type}`).join(', ')})`);
  const newList = after.map((c) => q(c.name)).join(', ');
  await driver.run(`INSERT INTO ${q(names.target)} (${newList}) SELECT ${newList} FROM ${q(TMP.recomputed)}`);
  await driver.run(
    `INSERT INTO ${q(names.changes)} (${newList}, _change_type, _commit_version, _commit_timestamp) SELECT ${newList}, 'insert', ${ver}, ${ts} FROM ${q(TMP.recomputed)}`,
    [version, at],
  );
  // Every row is replaced: each stored version removed, each recomputed one added (and closed
  // when it has an end), and every key changed (ChangeCounts).
  const keyList = model.keys.map((k) => q(k.name)).join(', ');
  const row = (
    await driver.query(
      `SELECT CAST(count(*) AS INTEGER) AS added, CAST(count(*) FILTER (WHERE NOT ${q(CURRENT)}${flow.deletes === 'tombstone' ? ` AND NOT coalesce(${q(flow.deletedColumn)}, false)` : ''}${flow.storedAs === 'scd1' ? ' AND false' : ''}) AS INTEGER) AS closed,
       (SELECT CAST(count(*) AS INTEGER) FROM (SELECT DISTINCT ${keyList} FROM ${q(TMP.recomputed)}) k) AS keys FROM ${q(TMP.recomputed)}`,
    )
  )[0]!;
  // Keys are counted on the side that has more of them (the flow's keys may have changed).
  return {
    keysChanged: Math.max(Number(row.keys), Number(old.keys)),
    versionsAdded: Number(row.added),
    versionsChanged: 0,
    versionsRemoved: deleted,
    versionsClosed: Number(row.closed),
  };
}
