import { realpathSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { KeyedMutex } from './keyed-mutex.js';

/**
 * One DuckDB instance per database file per process (docs/decisions/
 * 0032-one-duckdb-instance-per-file-per-process.md). DuckDB's file lock is per process, so a second instance of a file in the
 * same process opens it too, each with its own copy of the database in memory, and one's commits
 * overwrite the other's. Instead every driver of a file shares the file's instance (each with its
 * own connection, so its own transaction and temporary tables) and its target locks; the last
 * release closes the instance and frees the file for other processes. ':memory:' databases are
 * private to each open.
 */
export interface SharedInstance {
  readonly instance: DuckDBInstance;
  /** The commits of one target in this instance, one at a time (DuckDBDriver.lockTarget). */
  readonly targets: KeyedMutex;
  /** Give this reference back (idempotent); the last one closes the instance. */
  release(): void;
}

interface Entry {
  ready: Promise<DuckDBInstance>;
  targets: KeyedMutex;
  /** References handed out and not yet released, counting those still waiting for `ready`. */
  users: number;
}

/** The open files, by resolved path. An entry exists exactly while it has users. */
const open = new Map<string, Entry>();

/** The instance of a database file (opened on first use), or a private one for ':memory:'. */
export async function acquireInstance(location: string): Promise<SharedInstance> {
  if (location === '' || location.startsWith(':memory:')) {
    const instance = await DuckDBInstance.create(location);
    return reference({ ready: Promise.resolve(instance), targets: new KeyedMutex(), users: 1 }, instance);
  }
  const key = fileKey(location);
  let entry = open.get(key);
  if (!entry) {
    const created: Entry = { ready: DuckDBInstance.create(location), targets: new KeyedMutex(), users: 0 };
    // A file that cannot be opened is not remembered: the next open tries again.
    created.ready.catch(() => open.get(key) === created && open.delete(key));
    entry = created;
    open.set(key, entry);
  }
  entry.users++;
  let instance: DuckDBInstance;
  try {
    instance = await entry.ready;
  } catch (e) {
    entry.users--;
    throw e;
  }
  return reference(entry, instance, key);
}

function reference(entry: Entry, instance: DuckDBInstance, key?: string): SharedInstance {
  let released = false;
  return {
    instance,
    targets: entry.targets,
    release() {
      if (released) return;
      released = true;
      if (--entry.users > 0) return;
      if (key !== undefined && open.get(key) === entry) open.delete(key);
      instance.closeSync();
    },
  };
}

/** A file's identity: its absolute path, through symbolic links (of the file or its folder). */
function fileKey(location: string): string {
  const abs = path.resolve(location);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
    } catch {
      return abs;
    }
  }
}

/**
 * Whether DuckDB aborted a statement for a write-write conflict with another connection of the
 * instance (two opens creating the same catalog table at once). Outside a transaction the
 * statement was rolled back whole, so it can run again.
 */
export function isWriteConflict(e: unknown): boolean {
  return /write-write conflict/i.test(e instanceof Error ? e.message : String(e));
}
