import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ScdError } from '../../errors.js';
import type { PGliteLike } from './postgres-client.js';

/**
 * `pglite://PATH`: at most one open PGlite per data folder per process (docs/decisions/
 * 0035-a-pglite-folder-is-opened-once-per-process.md). Two PGlite instances of one folder each keep their
 * own copy of the database in memory: neither sees the other's commits and each overwrites the
 * other's files. Nor can two drivers share one instance the way DuckDB's do: a PGlite instance is
 * one PostgreSQL session, so two drivers would share one transaction, one search path and one set
 * of temporary tables. A second open of a folder already open is refused (as a DuckDB file held by
 * another process is); closing the first frees the folder.
 */
const open = new Set<string>();

export async function openPGliteFolder(folder: string, location: string, create: (folder: string) => Promise<PGliteLike>): Promise<PGliteLike> {
  const key = folderKey(folder);
  if (open.has(key))
    throw new ScdError('DB_IN_USE', `database ${location} is already open in this process (PGlite is one session per data folder)`, {
      fix: 'close the other driver first or run the calls on it one after another; concurrent writers need a PostgreSQL server',
    });
  open.add(key);
  let db: PGliteLike;
  try {
    db = await create(folder);
  } catch (e) {
    open.delete(key);
    throw e;
  }
  let closed = false;
  return {
    query: (sql, params, options) => db.query(sql, params, options),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        open.delete(key);
      }
    },
  };
}

/** A folder's identity: its absolute path, through symbolic links. */
function folderKey(folder: string): string {
  const abs = path.resolve(folder);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}
