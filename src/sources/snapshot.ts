import path from 'node:path';
import type { Driver, InputFile } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { ColumnModel } from '../flow/column-model.js';
import type { Flow } from '../flow/flow.js';
import type { CommitSpec } from '../plan/apply.js';
import { type StoreNames, TMP } from '../store/names.js';
import { currentCondition, dataColumns, OP } from '../store/target-columns.js';
import { castStaged, type StagedColumn } from '../typing/cast.js';

export const SNAPSHOT_VERSION = '_snapshot_version';
export const SNAPSHOT_DELETED = '_snapshot_deleted';
/** Scratch names of the snapshot as read, where scratch is made anew instead of changed in place. */
const SNAPSHOT_READ = '_scd_snapshot_read';
const SNAPSHOT_LIVE = '_scd_snapshot_live';

/** The snapshot version a file name carries: its last run of digits (snapshot_0003.csv → 3). */
export function versionFromName(file: string): number | undefined {
  const m = /(\d+)(?!.*\d)/.exec(path.basename(file, path.extname(file)));
  return m ? Number(m[1]) : undefined;
}

/** Order snapshot files by version (from the name; by name when the version is a column). */
export function orderSnapshots(flow: Flow, files: InputFile[]): InputFile[] {
  if (flow.source?.versionColumn) return files;
  for (const f of files)
    if (versionFromName(f.path) === undefined)
      throw new ScdError('SOURCE_INVALID', `snapshot file ${path.basename(f.path)} has no version number in its name`, {
        file: flow.origin,
        field: 'source.versionColumn',
        fix: 'name snapshots like snapshot_0001.csv, or set source.versionColumn',
      });
  return [...files].sort((a, b) => versionFromName(a.path)! - versionFromName(b.path)!);
}

/**
 * One snapshot file as a commit (like Databricks apply_changes_from_snapshot): keys new or
 * changed since the live state are upserted at the snapshot's version, live keys missing from it
 * are deleted at that version, unchanged rows are dropped before they cost anything.
 */
export function snapshotSpec(flow: Flow, driver: Driver, file: InputFile, stageFile: () => Promise<{ skipped: number }>): Pick<CommitSpec, 'stage' | 'prepare'> {
  const d = driver.dialect;
  const q = d.quote;
  const versionCol = flow.source?.versionColumn ?? SNAPSHOT_VERSION;
  return {
    stage: async () => {
      const out = await stageFile();
      const version = flow.source?.versionColumn ? undefined : Math.trunc(versionFromName(file.path)!);
      if (d.capabilities.temporaryTables) {
        if (version !== undefined) await driver.run(`ALTER TABLE ${q(TMP.stage)} ADD COLUMN ${q(SNAPSHOT_VERSION)} ${d.types.bigint} DEFAULT ${version}`);
        // DEFAULT 'false', not false: DuckDB's parser turns ADD COLUMN … DEFAULT false into five
        // statements (which a prepared statement refuses), a quoted constant into one.
        await driver.run(`ALTER TABLE ${q(TMP.stage)} ADD COLUMN ${q(SNAPSHOT_DELETED)} ${d.types.bool} DEFAULT 'false'`);
      } else {
        // Scratch that cannot change in place is made anew with the two columns.
        await driver.run(d.moveScratch(TMP.stage, SNAPSHOT_READ));
        const versionItem = version === undefined ? '' : `, CAST(${version} AS ${d.types.bigint}) AS ${q(SNAPSHOT_VERSION)}`;
        await driver.run(d.scratch(TMP.stage, `SELECT s.*${versionItem}, false AS ${q(SNAPSHOT_DELETED)} FROM ${q(SNAPSHOT_READ)} s`));
      }
      // The staged table has columns the reader did not make: the commit looks them up.
      return { ...out, columns: undefined };
    },
    prepare: async (drv: Driver, model: ColumnModel, names: StoreNames, existed: boolean, stagedAs: ReadonlyMap<string, StagedColumn>) => {
      // A snapshot is a full image: a record it cannot identify would read as a deleted key.
      const bad = (
        await drv.query(
          `SELECT ${q(FILE_COLUMN)} AS f, CAST(${q(LINE_COLUMN)} AS ${d.types.bigint}) AS l, reason FROM ${q(TMP.rejects)}
         UNION ALL SELECT ${q(FILE_COLUMN)}, CAST(${q(LINE_COLUMN)} AS ${d.types.bigint}), 'a key column is null' FROM ${q(TMP.stage)}
           WHERE ${model.keys.map((k) => `${q(k.name)} IS NULL`).join(' OR ')}
         ORDER BY 2 LIMIT 1`,
        )
      )[0];
      if (bad)
        throw new ScdError(
          'NOT_APPLIED',
          `snapshot ${path.basename(file.path)} has a record it cannot identify (line ${bad.l}: ${bad.reason}); a snapshot must be complete, so nothing was applied`,
          {
            file: flow.origin,
            fix: 'correct that line (or replace the file) and apply again',
          },
        );
      if (!existed) return { implied: 0, unchanged: 0 };
      const seqType = model.seq[0]!.type;
      const stagedCols = (await drv.columns(TMP.stage)) ?? [];
      const stagedType = (n: string) => stagedCols.find((c) => c.name === n)?.type ?? seqType;
      const stagedAsOf = (n: string): StagedColumn => stagedAs.get(n) ?? { type: stagedType(n) };
      const typed = (n: string, type: string) => castStaged(d, `s.${q(n)}`, stagedAsOf(n), type, flow.timeZone).expr;
      // A stored value written back into a staged column, in the form that column holds.
      const asStaged = (n: string, expr: string) => {
        const form = stagedAsOf(n).lexical;
        return form === 'json' ? d.toJson(expr) : form === 'text' ? d.toText(expr) : expr;
      };
      const range = (
        await drv.query(
          `SELECT CAST(min(${typed(versionCol, seqType)}) AS ${d.types.text}) AS lo, CAST(max(${typed(versionCol, seqType)}) AS ${d.types.text}) AS hi FROM ${q(TMP.stage)} s`,
        )
      )[0]!;
      const last = (await drv.query(`SELECT CAST(max(${q(versionCol)}) AS ${d.types.text}) AS v FROM ${q(names.events)} WHERE ${q(OP)} <> 2`))[0]!;
      if (range.lo === null) return { implied: 0, unchanged: 0 };
      const older = (await drv.query(`SELECT CAST($1 AS ${seqType}) <= CAST($2 AS ${seqType}) AS older`, [range.lo, last.v ?? range.lo]))[0]!;
      if (last.v !== null && older.older)
        throw new ScdError(
          'NOT_APPLIED',
          `snapshot ${path.basename(file.path)} (version ${range.lo}) is not newer than the last applied snapshot (version ${last.v}); nothing was applied`,
          {
            file: flow.origin,
            fix: 'snapshots apply in version order: give it a higher version, or rebuild the target from scratch',
          },
        );
      const keys = model.keys.map((k) => k.name);
      const compared = dataColumns(model).filter((c) => !model.seq.some((s) => s.name === c.name));
      const live = currentCondition(flow, model, d, 't.');
      const sameKey = keys.map((k) => `t.${q(k)} = ${typed(k, model.keys.find((c) => c.name === k)!.type)}`).join(' AND ');
      const sameRow = compared
        .map((c) => (stagedCols.some((s) => s.name === c.name) ? `t.${q(c.name)} IS NOT DISTINCT FROM ${typed(c.name, c.type)}` : `t.${q(c.name)} IS NULL`))
        .join(' AND ');
      // Live keys missing from the snapshot are deleted at its version: the keys, the version, the
      // mark and the file (before unchanged rows go).
      const given = [...keys, versionCol, SNAPSHOT_DELETED, FILE_COLUMN];
      const impliedItems = [...keys.map((k) => asStaged(k, `t.${q(k)}`)), asStaged(versionCol, `CAST($1 AS ${seqType})`), 'true', '$2'];
      const impliedFrom = (staged: string) => `FROM ${q(names.target)} t WHERE ${live} AND NOT EXISTS (SELECT 1 FROM ${q(staged)} s WHERE ${sameKey})`;
      // Rows equal to the live version of their key change nothing: they cost nothing further.
      const unchangedRow = `EXISTS (SELECT 1 FROM ${q(names.target)} t WHERE ${live} AND ${sameKey} AND ${sameRow})`;
      const params = [range.hi, file.label ?? file.path];
      if (!d.capabilities.temporaryTables) {
        // Scratch that cannot change in place is made anew: its changed rows and the implied deletes
        // (in the staged table's column order, every other column null), both counts in one query.
        await drv.run(d.moveScratch(TMP.stage, SNAPSHOT_LIVE));
        const items = stagedCols.map((c) => `CAST(${given.includes(c.name) ? impliedItems[given.indexOf(c.name)] : 'NULL'} AS ${c.type}) AS ${q(c.name)}`);
        await drv.run(
          d.scratch(TMP.stage, `SELECT * FROM ${q(SNAPSHOT_LIVE)} s WHERE NOT ${unchangedRow} UNION ALL SELECT ${items.join(', ')} ${impliedFrom(SNAPSHOT_LIVE)}`),
          params,
        );
        const n = (
          await drv.query(
            `SELECT (SELECT count(*) FROM ${q(TMP.stage)} WHERE ${q(SNAPSHOT_DELETED)}) AS implied,
                  (SELECT count(*) FROM ${q(SNAPSHOT_LIVE)}) - (SELECT count(*) FROM ${q(TMP.stage)} WHERE NOT ${q(SNAPSHOT_DELETED)}) AS unchanged`,
          )
        )[0]!;
        return { implied: Number(n.implied), unchanged: Number(n.unchanged) };
      }
      await drv.run(`INSERT INTO ${q(TMP.stage)} (${given.map(q).join(', ')}) SELECT ${impliedItems.join(', ')} ${impliedFrom(TMP.stage)}`, params);
      const count = async (where: string) => Number((await drv.query(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${q(TMP.stage)} WHERE ${where}`))[0]!.n);
      const implied = await count(q(SNAPSHOT_DELETED));
      const before = await count(`NOT ${q(SNAPSHOT_DELETED)}`);
      await drv.run(`DELETE FROM ${q(TMP.stage)} s WHERE NOT s.${q(SNAPSHOT_DELETED)} AND ${unchangedRow}`);
      const after = await count(`NOT ${q(SNAPSHOT_DELETED)}`);
      return { implied, unchanged: before - after };
    },
  };
}
