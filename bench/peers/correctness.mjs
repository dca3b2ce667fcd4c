// What a side made of the batch, read from its history after the run: the correctness column of
// the peers' table. Every side's history is read in one shape (key id, the attributes, the start
// and end of each version; an open version ends in null), with the batch's own events:
// - late events: the out-of-order batch's events older than the dimension's current versions
//   (before 2025, bench/generate.mjs); placed = a version of that key starts at the event's time and
//   is closed by a later one; made current = that version is the key's open one (the later version
//   was closed at an older time); dropped = no version starts at the event;
// - deletes: closed at the event's time, closed at another time (the run's clock), or the key still
//   has a current version (the delete was ignored, or became a version);
// - unchanged versions: versions the batch opened (starting 2025 or later) whose values equal the
//   key's version before them (a re-delivery versioned although nothing changed);
// - against scdkit (when its result is given): rows of this history not in scdkit's, and back.

import { ATTRS, COLUMNS } from '../generate.mjs';

const sqlString = (s) => `'${String(s).replace(/'/g, "''")}'`;
/** The first time of the batches' in-order events (bench/generate.mjs): older events are late. */
const BATCH_START = `TIMESTAMP '2025-01-01'`;

/**
 * A history's shape: `select` yields id, the attributes, f (start) and t (end, null while open).
 * @param {{ table: string, from: string, to: string, openEnd?: string }} history `openEnd`: the end an open version holds (instead of null)
 */
export const historyOf = ({ table, from, to, openEnd }) =>
  `SELECT id, ${ATTRS.join(', ')}, CAST(${from} AS TIMESTAMP) AS f, ${openEnd ? `NULLIF(CAST(${to} AS TIMESTAMP), ${openEnd})` : `CAST(${to} AS TIMESTAMP)`} AS t FROM ${table}`;

/** The query of the metrics, over history `h` (SQL of historyOf), the batch file, and scdkit's history (or null). */
export function correctnessSql(h, batchFile, scdkitHistory) {
  const same = ATTRS.map((c) => `${c} IS NOT DISTINCT FROM p_${c}`).join(' AND ');
  const events = `read_json(${sqlString(batchFile)}, format = 'newline_delimited', columns = {${Object.entries(COLUMNS)
    .map(([n, t]) => `${n}: '${t}'`)
    .join(', ')}})`;
  return `
    WITH h AS (${h}),
         ev AS (SELECT id, updated_at, op FROM ${events}),
         late AS (SELECT id, updated_at FROM ev WHERE updated_at < ${BATCH_START}),
         dels AS (SELECT id, updated_at FROM ev WHERE op = 'D'),
         cur AS (SELECT DISTINCT id FROM h WHERE t IS NULL),
         last_end AS (SELECT id, max(t) AS t FROM h GROUP BY id),
         seq AS (SELECT f, ${ATTRS.map((c) => `${c}, lag(${c}) OVER w AS p_${c}`).join(', ')}, lag(f) OVER w AS p_f
                 FROM h WINDOW w AS (PARTITION BY id ORDER BY f))${scdkitHistory ? `,\n         s AS (${scdkitHistory})` : ''}
    SELECT (SELECT count(*) FROM h)::BIGINT AS versions,
           (SELECT count(*) FROM h WHERE t IS NULL)::BIGINT AS current,
           (SELECT count(*) FROM late)::BIGINT AS late_events,
           (SELECT count(*) FROM late l SEMI JOIN h ON h.id = l.id AND h.f = l.updated_at AND h.t IS NOT NULL)::BIGINT AS late_placed,
           (SELECT count(*) FROM late l SEMI JOIN h ON h.id = l.id AND h.f = l.updated_at AND h.t IS NULL)::BIGINT AS late_made_current,
           (SELECT count(*) FROM dels)::BIGINT AS deletes,
           (SELECT count(*) FROM dels d SEMI JOIN cur ON cur.id = d.id)::BIGINT AS deletes_still_current,
           (SELECT count(*) FROM dels d ANTI JOIN cur ON cur.id = d.id JOIN last_end e ON e.id = d.id WHERE e.t = d.updated_at)::BIGINT AS deletes_at_event_time,
           (SELECT count(*) FROM dels d ANTI JOIN cur ON cur.id = d.id JOIN last_end e ON e.id = d.id WHERE e.t IS DISTINCT FROM d.updated_at)::BIGINT AS deletes_at_other_time,
           (SELECT count(*) FROM seq WHERE f >= ${BATCH_START} AND p_f IS NOT NULL AND ${same})::BIGINT AS unchanged_versions${
             scdkitHistory
               ? `,
           (SELECT count(*) FROM (SELECT * FROM h EXCEPT ALL SELECT * FROM s))::BIGINT AS not_in_scdkit,
           (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM h))::BIGINT AS missing_from_scdkit`
               : ''
           }`;
}
