/** The engines scdkit runs on, by the name their dialect has. */
export type EngineName = 'duckdb' | 'postgres' | 'spark';

/** The engine a database location names (the same reading as openDriver's). */
export function engineOfDatabase(database: string): EngineName {
  if (/^(postgres(ql)?|pglite):\/\//i.test(database)) return 'postgres';
  if (/^sc:\/\//i.test(database)) return 'spark';
  return 'duckdb';
}

/**
 * The file or folder a database location is on this machine: a DuckDB file, a PGlite folder
 * (undefined: in memory, or a server). Opening one that is not there creates it.
 */
export function localDatabasePath(database: string): string | undefined {
  if (database.startsWith(':memory:')) return undefined;
  const lite = /^pglite:\/\/(.*)$/i.exec(database);
  if (lite) return lite[1] === '' || lite[1] === 'memory' ? undefined : lite[1]!;
  return /^[a-z]+:\/\//i.test(database) ? undefined : database;
}
