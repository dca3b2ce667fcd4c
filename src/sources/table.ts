import { quoteDotted } from '../dialects/dialect.js';
import type { ColumnInfo, Driver } from '../dialects/driver.js';
import { FILE_COLUMN, LINE_COLUMN } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import type { Flow } from '../flow/flow.js';
import type { CommitSpec } from '../plan/apply.js';
import { type StoreNames, TMP } from '../store/names.js';

/** Where the last applied watermark of a table/query source is kept. */
export async function ensureWatermarks(driver: Driver, names: StoreNames): Promise<void> {
  const t = driver.dialect.types;
  await driver.run(
    driver.dialect.createTable(names.watermarks, `target ${t.text} NOT NULL, source ${t.text} NOT NULL, value ${t.text}, version ${t.int} NOT NULL`, {
      ifNotExists: true,
      primaryKey: ['target'],
    }),
  );
}

/**
 * Changes read from a table or query of the same database. With a watermark column, only rows
 * above the last applied value are read (and the new maximum is recorded in the same commit);
 * without one, every row is read each time, and rows already applied count as duplicates.
 */
export async function tableSpec(driver: Driver, flow: Flow, names: StoreNames): Promise<Pick<CommitSpec, 'inputs' | 'stage' | 'afterRecord'>> {
  const src = flow.source!;
  const q = driver.dialect.quote;
  const label = src.table ? `table ${src.table}` : 'query';
  if (src.query) {
    if (src.query.includes(';'))
      throw new ScdError('FLOW_INVALID', 'source.query must be one SELECT without ";"', { file: flow.origin, field: 'source.query', fix: 'remove the ";"' });
  }
  const from = src.table ? quoteDotted(driver.dialect, src.table) : `(${src.query}) src`;
  await ensureWatermarks(driver, names);
  const last = (await driver.query(`SELECT value FROM ${q(names.watermarks)} WHERE target = $1`, [names.target]))[0]?.value ?? null;
  let where = '';
  let wmType = '';
  if (src.watermark) {
    let cols: ColumnInfo[];
    try {
      cols = await driver.describe(`SELECT * FROM ${from}`);
    } catch (e) {
      throw new ScdError('SOURCE_INVALID', `cannot read ${label}: ${e instanceof Error ? e.message : String(e)}`, {
        file: flow.origin,
        field: 'source',
        fix: 'check the table name or query',
      });
    }
    const col = cols.find((c) => c.name === src.watermark);
    if (!col)
      throw new ScdError('SOURCE_INVALID', `watermark column "${src.watermark}" is not in ${label}`, {
        file: flow.origin,
        field: 'source.watermark',
        fix: 'name a column of the source',
      });
    wmType = col.type;
    if (last !== null) where = ` WHERE ${q(src.watermark)} > CAST($1 AS ${wmType})`;
  }
  let reached: string | null = null;
  return {
    inputs: [label],
    stage: async (drv) => {
      await drv.run(`DROP TABLE IF EXISTS ${q(TMP.rejects)}`);
      await drv.run(
        drv.dialect.scratch(
          TMP.rejects,
          `SELECT CAST(NULL AS ${drv.dialect.types.text}) AS ${q(FILE_COLUMN)}, CAST(NULL AS ${drv.dialect.types.bigint}) AS ${q(LINE_COLUMN)}, CAST(NULL AS ${drv.dialect.types.text}) AS reason, CAST(NULL AS ${drv.dialect.types.text}) AS raw WHERE false`,
        ),
      );
      try {
        await drv.run(
          drv.dialect.scratch(
            TMP.stage,
            `SELECT *, CAST($${where ? 2 : 1} AS ${drv.dialect.types.text}) AS ${q(FILE_COLUMN)}, CAST(${drv.dialect.rowNumberAsRead} AS ${drv.dialect.types.bigint}) AS ${q(LINE_COLUMN)} FROM ${from}${where}`,
          ),
          where ? [last, label] : [label],
        );
      } catch (e) {
        throw new ScdError('SOURCE_INVALID', `cannot read ${label}: ${e instanceof Error ? e.message : String(e)}`, {
          file: flow.origin,
          field: 'source',
          fix: 'check the table name or query',
        });
      }
      // The watermark the rows reach, read now: the commit drops the staged rows once mapped.
      if (src.watermark) reached = (await drv.query(`SELECT CAST(max(${q(src.watermark)}) AS ${drv.dialect.types.text}) AS v FROM ${q(TMP.stage)}`))[0]!.v as string | null;
      return { skipped: 0 };
    },
    afterRecord: src.watermark
      ? async (drv, version) => {
          if (reached === null) return;
          await drv.run(`DELETE FROM ${q(names.watermarks)} WHERE target = $1`, [names.target]);
          await drv.run(`INSERT INTO ${q(names.watermarks)} VALUES ($1, $2, $3, CAST($4 AS ${drv.dialect.types.int}))`, [names.target, label, reached, version]);
        }
      : undefined,
  };
}
