import type { Driver } from '../dialects/driver.js';
import { firstOfEachSql } from '../dialects/first-of-each.js';
import { ScdError } from '../errors.js';
import { executorFor } from '../execute/executor.js';
import { INTERNAL_COLUMN_PREFIX } from '../files/source-keys.js';
import type { Flow } from '../flow/flow.js';
import { ensureCatalog } from '../store/catalog.js';
import { type CommitResult, emptyCommit, recordCommit } from '../store/commits.js';
import { type StoreNames, storeNames, TMP, written } from '../store/names.js';
import { COMMIT, HASH, OP, OP_DELETE, OP_TRUNCATE, OP_UPSERT, sequenceType } from '../store/target-columns.js';
import type { Progress } from './apply.js';
import { beginRecordedCommit } from './begin-recorded.js';
import { countOf } from './commit/count.js';
import { reportDiskFull } from './disk-full.js';
import { FOLDED_COMMIT } from './events-sql.js';
import { type ColumnModel, greater, seqParts } from './model.js';
import { withScratch } from './scratch.js';
import { checkedSequenceValue } from './sequence-value.js';
import { walkSql } from './walk-sql.js';

const VERSION_START = `${INTERNAL_COLUMN_PREFIX}vs`;
const VERSION_END = `${INTERNAL_COLUMN_PREFIX}ve`;
const VERSION_DELETED = `${INTERNAL_COLUMN_PREFIX}vd`;

export interface CompactResult extends CommitResult {
  /** Events folded away, and the events that now stand for them. */
  eventsFolded: number;
  eventsWritten: number;
}

/**
 * Fold the kept events whose sequence (its first part) is older than `before` into the fewest
 * events that give the same history: per key, one upsert per version that starts before it (two
 * when a kept sequence column moved inside the version) and one delete per deletion. The target
 * does not change. Later events older than the watermark are quarantined ("older than the
 * compaction watermark"): exact, never silently wrong. A key with a tie before T is not folded
 * (the order of tied events depends on their payloads), and truncates are kept. A rebuild after
 * compaction cannot split folded versions more finely than they were.
 *
 * On an engine without transactions (Spark + Delta) it is a commit like an apply's: under the
 * target's lease, an interrupted commit undone first, each write of the log labelled with the
 * commit's number (the next commit undoes an interrupted compaction), the record last.
 */
export async function compact(driver: Driver, flow: Flow, given: string, progress: Progress = () => {}): Promise<CompactResult> {
  const started = Date.now();
  const q = driver.dialect.quote;
  await ensureCatalog(driver, storeNames(flow.target));
  // A full disk undoes the compaction whole, and says so in one line (disk-full.ts).
  return withScratch(driver, () =>
    reportDiskFull(driver, flow, 'compaction', () =>
      driver.transaction(async () => {
        // A compaction is a commit: it takes its turn with the target's applies and rebuilds, and
        // reads the log as of its start (Spark: a pinned version, which its own writes leave alone).
        const begun = await beginRecordedCommit(driver, flow, storeNames(flow.target), progress, 'run `scd apply` first');
        const { record, version, names } = begun;
        const model = record.model;
        const watermark = await checkedWatermark(driver, model, given, record.compactedBefore);
        const at = new Date().toISOString();
        progress('walking the events to fold');
        const folded = await stageFoldableEvents(driver, model, names, watermark);
        await walkVersions(driver, flow, model);
        const folds = await foldsOfVersions(driver, model);
        // The folded keys' old events make way for their folds (truncates stay).
        const executor = executorFor(driver.dialect);
        const log = written(names, 'events', q);
        const old = { column: q(model.seq[0]!.name), below: watermark.below };
        await executor.foldLog(driver, { log, keys: model.keys.map((k) => q(k.name)), keysTable: q(TMP.keys), ...folds, old, params: [watermark.value] });
        // The log as it is now (not the compaction's pinned start).
        const foldsInLog = await countOf(driver, `SELECT CAST(count(*) AS INTEGER) AS n FROM ${log} WHERE ${q(COMMIT)} = ${FOLDED_COMMIT} AND ${old.column} < ${old.below}`, [
          watermark.value,
        ]);
        await executor.writeFlowRecord(driver, names, { ...record, compactedBefore: watermark.value }, at);
        const result: CompactResult = {
          ...emptyCommit(version, 'compact', at, [`before ${watermark.value}`]),
          durationMs: Date.now() - started - begun.waited,
          eventsFolded: folded,
          eventsWritten: foldsInLog,
        };
        const { eventsFolded: _f, eventsWritten: _w, ...commit } = result;
        await recordCommit(driver, names, commit);
        return result;
      }),
    ),
  );
}

/** The compaction's watermark: its value as the engine compares it exactly (also stored so), and as SQL ($1). */
interface Watermark {
  value: string;
  below: string;
}

/** `given` as the first sequence column's value, refused where it is not later than the last compaction's. */
async function checkedWatermark(driver: Driver, model: ColumnModel, given: string, compactedBefore: string | undefined): Promise<Watermark> {
  const first = model.seq[0]!;
  // The watermark as the engine compares it exactly, or a person's error.
  const value = await checkedSequenceValue(driver, given, first);
  const below = `CAST($1 AS ${first.type})`;
  if (compactedBefore !== undefined) {
    const older = (await driver.query(`SELECT ${below} <= CAST($2 AS ${first.type}) AS o`, [value, compactedBefore]))[0]!;
    if (older.o) throw new ScdError('USAGE', `events before ${compactedBefore} are already compacted`, { fix: `give a later --before than ${compactedBefore}` });
  }
  return { value, below };
}

/**
 * The keys to fold (TMP.keys) and their old events with the old truncates (TMP.events), the
 * sequence as its parts; returns how many events fold away.
 */
async function stageFoldableEvents(driver: Driver, model: ColumnModel, names: StoreNames, watermark: Watermark): Promise<number> {
  const d = driver.dialect;
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model);
  const P = model.payload.map((p) => q(p.name));
  const old = `${q(model.seq[0]!.name)} < ${watermark.below}`;
  const before = watermark.value;
  const seqAs = (a: string) => model.seq.map((c, i) => `${a}.${q(c.name)} AS ${q(S[i]!)}`);
  // Keys with a tie before T (two events at one sequence, or an event at a truncate's sequence)
  // are left as they are: a tie's order depends on the payloads that folding would replace.
  const seqCols = model.seq.map((c) => q(c.name)).join(', ');
  await driver.run(
    d.scratch(
      TMP.keys,
      `SELECT ${K.join(', ')} FROM (
     SELECT ${K.join(', ')}, ${seqCols}, count(*) AS n,
       bool_or(EXISTS (SELECT 1 FROM ${q(names.events)} t WHERE t.${q(OP)} = ${OP_TRUNCATE} AND ${model.seq.map((c) => `t.${q(c.name)} = l.${q(c.name)}`).join(' AND ')})) AS at_truncate
     FROM ${q(names.events)} l WHERE ${q(OP)} <> ${OP_TRUNCATE} AND ${old}
     GROUP BY ${K.join(', ')}, ${seqCols}) g
   GROUP BY ${K.join(', ')} HAVING max(n) = 1 AND NOT bool_or(at_truncate)`,
    ),
    [before],
  );
  await driver.run(
    d.scratch(
      TMP.events,
      `       SELECT ${[...K.map((k) => `l.${k}`), ...seqAs('l'), `l.${q(OP)}`, ...P.map((p) => `l.${p}`), `l.${q(HASH)}`].join(', ')}
     FROM ${q(names.events)} l JOIN ${q(TMP.keys)} k ON ${model.keys.map((c) => `k.${q(c.name)} = l.${q(c.name)}`).join(' AND ')}
     WHERE l.${q(OP)} <> ${OP_TRUNCATE} AND l.${old}
   UNION ALL
   SELECT ${[...K.map((k) => `k.${k}`), ...seqAs('t'), `t.${q(OP)}`, ...model.payload.map((p) => `CAST(NULL AS ${p.type})`), `t.${q(HASH)}`].join(', ')}
     FROM ${q(TMP.keys)} k CROSS JOIN (SELECT * FROM ${q(names.events)} x WHERE x.${q(OP)} = ${OP_TRUNCATE} AND x.${old}) t`,
    ),
    [before],
  );
  return countOf(driver, `SELECT CAST(count(*) AS INTEGER) AS n FROM ${q(TMP.events)} WHERE ${q(OP)} <> ${OP_TRUNCATE}`);
}

/** The walk over the old events only (TMP.events), as versions with tombstones, deletions made explicit (TMP.recomputed). */
async function walkVersions(driver: Driver, flow: Flow, model: ColumnModel): Promise<void> {
  const d = driver.dialect;
  const pseudo: Flow = {
    ...flow,
    storedAs: 'scd2',
    deletes: 'tombstone',
    startAtColumn: VERSION_START,
    endAtColumn: VERSION_END,
    deletedColumn: VERSION_DELETED,
    endSentinel: undefined,
    isCurrentColumn: undefined,
    isCurrentValues: undefined,
    // The versions' ends are turned back into events at the next start: the end as the start it is.
    endInclusive: false,
    surrogateKey: undefined,
  };
  // An scd1 target never needed the type of a tuple sequence's versions; the walk here does.
  for (const sql of d.prepareTypes([sequenceType(d, model)])) await driver.run(sql);
  for (const sql of walkSql(pseudo, model, d, TMP.events, TMP.recomputed)) await driver.run(sql);
}

/**
 * Versions → events, as SELECTs of the log's columns: one upsert per version, one delete per
 * deletion, and where a kept sequence column moved inside a version, the upsert that restores it
 * (its versions staged in TMP.stored).
 */
async function foldsOfVersions(driver: Driver, model: ColumnModel): Promise<{ columns: string[]; folds: string[] }> {
  const d = driver.dialect;
  const q = d.quote;
  const K = model.keys.map((k) => q(k.name));
  const S = seqParts(model);
  // Versions → events. A kept sequence column holds the version's LAST event's sequence: when it
  // differs from the version's start, a second upsert at that sequence restores it in place.
  const part = (col: string, i: number) => (model.seq.length === 1 ? `v.${q(col)}` : `(v.${q(col)}).${q(model.seq[i]!.name)}`);
  const keptSeq = model.seq.filter((c) => model.payload.some((p) => p.name === c.name));
  const srcCols = model.source.map((c) => c.name);
  const select = (op: number, seqOf: (c: string, i: number) => string, withPayload: boolean) => {
    const cols = srcCols.map((c) => {
      const si = model.seq.findIndex((s) => s.name === c);
      if (si >= 0) return `${seqOf(c, si)} AS ${q(c)}`;
      if (model.keys.some((k) => k.name === c)) return `v.${q(c)}`;
      if (withPayload && model.payload.some((p) => p.name === c)) return `v.${q(c)}`;
      return `CAST(NULL AS ${model.source.find((s) => s.name === c)!.type}) AS ${q(c)}`;
    });
    const payload = model.payload.map((p) => {
      const si = model.seq.findIndex((s) => s.name === p.name);
      return si >= 0 ? seqOf(p.name, si) : withPayload ? `v.${q(p.name)}` : `CAST(NULL AS ${p.type})`;
    });
    return `${cols.join(', ')}, ${op}, ${d.rowHash(payload)}, ${FOLDED_COMMIT}`;
  };
  const atStart = (_c: string, i: number) => part(VERSION_START, i);
  const logColumns = [...srcCols, OP, HASH, COMMIT].map(q);
  // The folds: one upsert per version, one delete per deletion, and where a kept sequence
  // column moved inside a version, the upsert that restores it.
  const folds = [
    `SELECT ${select(OP_UPSERT, atStart, true)} FROM ${q(TMP.recomputed)} v WHERE NOT v.${q(VERSION_DELETED)}`,
    `SELECT ${select(OP_DELETE, atStart, false)} FROM ${q(TMP.recomputed)} v WHERE v.${q(VERSION_DELETED)}`,
  ];
  if (keptSeq.length) {
    const moved = model.seq.map((c, i) => (keptSeq.includes(c) ? `v.${q(c.name)} IS DISTINCT FROM ${part(VERSION_START, i)}` : 'false')).join(' OR ');
    // The restoring upsert goes at the whole sequence of the version's last event, found among
    // the folded events: with a tuple sequence, the start with only the kept part replaced could
    // come before the version's start (or after its end).
    const eParts = S.map((x) => `e.${q(x)}`);
    const vsParts = model.seq.map((_, i) => part(VERSION_START, i));
    const veParts = model.seq.map((_, i) => part(VERSION_END, i));
    const inVersion = `NOT ${greater(vsParts, eParts)} AND (${veParts[0]} IS NULL OR ${greater(veParts, eParts)})`;
    const lastPart = (i: number) => q(`${INTERNAL_COLUMN_PREFIX}ls${i}`);
    const vk = [...K.map((k) => `v.${k}`), ...vsParts];
    // Where the engine has no DISTINCT ON, the numbering names every column it keeps.
    const versionColumns = d.capabilities.distinctOn ? undefined : ((await driver.columns(TMP.recomputed)) ?? []).map((c) => c.name);
    await driver.run(
      d.scratch(
        TMP.stored,
        firstOfEachSql(d, {
          columns: [...(versionColumns?.map((c) => `v.${q(c)}`) ?? ['v.*']), ...eParts.map((e, i) => `${e} AS ${lastPart(i)}`)],
          ...(versionColumns && { names: [...versionColumns, ...model.seq.map((_, i) => `${INTERNAL_COLUMN_PREFIX}ls${i}`)] }),
          from: `${q(TMP.recomputed)} v JOIN ${q(TMP.events)} e ON ${K.map((k) => `e.${k} = v.${k}`).join(' AND ')} AND e.${q(OP)} = ${OP_UPSERT} AND ${inVersion}
     WHERE NOT v.${q(VERSION_DELETED)} AND (${moved})`,
          partition: vk,
          order: eParts.map((e) => `${e} DESC`),
        }),
      ),
    );
    folds.push(`SELECT ${select(OP_UPSERT, (_c, i) => `v.${lastPart(i)}`, true)} FROM ${q(TMP.stored)} v`);
  }
  return { columns: logColumns, folds };
}
