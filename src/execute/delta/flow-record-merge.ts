import type { Dialect } from '../../dialects/dialect.js';
import type { StoreNames } from '../../store/names.js';

/** The target's flow record replaced in one MERGE (parameters: catalog.ts flowRecordValues). */
export function flowRecordMergeSql(d: Dialect, names: StoreNames): string {
  return `MERGE INTO ${d.quote(names.flows)} f USING (SELECT $1 AS target, $2 AS model, $3 AS settings, CAST($4 AS ${d.types.timestamptz}) AS created_at) s ON f.target = s.target
       WHEN MATCHED THEN UPDATE SET model = s.model, settings = s.settings, created_at = s.created_at
       WHEN NOT MATCHED THEN INSERT (target, model, settings, created_at) VALUES (s.target, s.model, s.settings, s.created_at)`;
}
