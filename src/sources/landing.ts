import { createHash } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Driver, InputFile } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { isObjectStoreUrl } from '../files/object-store.js';
import type { Flow } from '../flow/flow.js';
import type { StoreNames } from '../store/names.js';
import { folderFiles, formatOf, isDataFile } from './files.js';

/**
 * What identifies an applied file, recorded in the same transaction as its commit: its name inside
 * the source folder (`path`: relative, `/`-separated; a single-file source's is its base name) and
 * its content (size + SHA-256). `mtimeMs` only spares hashing a file that did not change.
 */
export interface FileRecord {
  path: string;
  size: number;
  mtimeMs: number;
  hash: string;
}

/**
 * An applied file met under another name: renamed or moved inside the folder (its content is a
 * recorded one whose name is gone), or recorded by an absolute path (before files were named
 * inside their folder). The next commit records it under its name now (recordFiles).
 */
export interface Renamed {
  /** The path as recorded. */
  from: string;
  to: FileRecord;
  version: number;
}

export interface Pending {
  files: InputFile[];
  records: FileRecord[];
  /** Applied files under a new name: their records are renamed by the next commit. */
  renamed: Renamed[];
  /** Files that changed after they were applied: reported, never applied twice. */
  warnings: string[];
  /** Files already applied and unchanged. */
  alreadyApplied: number;
}

export async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

export async function ensureFilesTable(driver: Driver, names: StoreNames): Promise<void> {
  const d = driver.dialect;
  const t = d.types;
  await driver.run(
    d.createTable(
      names.files,
      `target ${t.text} NOT NULL, path ${t.text} NOT NULL, size ${t.bigint} NOT NULL, mtime_ms ${t.bigint} NOT NULL, hash ${t.text} NOT NULL, version ${t.int} NOT NULL`,
      { ifNotExists: true, primaryKey: ['target', 'path'] },
    ),
  );
}

/** A candidate file of the landing folder, with what scd identifies it by (all but its hash). */
type Listed = InputFile & { size: number; mtimeMs: number };
type Named = Listed & { name: string };

/** A file record as read, with its name inside the current source (a path outside it: itself). */
interface Recorded {
  recorded: string;
  name: string;
  size: number;
  mtimeMs: number;
  hash: string;
  version: number;
}

/**
 * A file's name inside the landing folder `src` (or a single-file source): what a record keeps, so
 * that the folder may move or be copied elsewhere and its files stay applied. Undefined for a path
 * outside it.
 */
export function nameInSource(src: string, file: string): string | undefined {
  if (isObjectStoreUrl(src)) {
    if (file === src) return file.slice(file.replace(/\/+$/, '').lastIndexOf('/') + 1);
    const prefix = src.endsWith('/') ? src : `${src}/`;
    return file.startsWith(prefix) ? file.slice(prefix.length) : undefined;
  }
  if (path.resolve(file) === path.resolve(src)) return path.basename(file);
  const rel = path.relative(src, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel.split(path.sep).join('/') : undefined;
}

/** Whether a recorded path is one written before files were named inside their folder: absolute, or a URL. */
const isLegacyPath = (p: string): boolean => path.isAbsolute(p) || isObjectStoreUrl(p) || /^[A-Za-z]:[\\/]/.test(p);

/** The target's file records, each with its name inside the source as it is now. */
async function recordedFiles(driver: Driver, names: StoreNames, src: string): Promise<Recorded[]> {
  const rows = await driver.query(`SELECT path, size, mtime_ms, hash, version FROM ${driver.dialect.quote(names.files)} WHERE target = $1`, [names.target]);
  return rows.map((r) => {
    const recorded = String(r.path);
    return {
      recorded,
      // A path outside the source keeps itself as its name: a listed file no name fits is named
      // so too (named()), and one outside the folder matches such a record by content only.
      name: isLegacyPath(recorded) ? (nameInSource(src, recorded) ?? recorded) : recorded,
      size: Number(r.size),
      mtimeMs: Number(r.mtime_ms),
      hash: String(r.hash),
      version: Number(r.version),
    };
  });
}

/**
 * The files of the flow's landing folder (or its single source file) not applied yet, in name
 * order. `minAgeMs` leaves files younger than that for later (a writer may still be writing).
 * A folder at an object-store URL is listed, and its files hashed, by the engine (Spark), which
 * reads them; a local one by scd itself.
 *
 * A file is the one applied under its name when its content is the recorded one (same size and
 * time, or else the same hash), and changed after it was applied otherwise (a warning; never
 * applied again). A file under a name no record has is an applied one renamed or moved when its
 * size and hash are those of a record whose name no file has any more (each record stands for
 * one file); else it is new. A copy beside its original is new.
 */
export async function pendingFiles(driver: Driver, flow: Flow, names: StoreNames, minAgeMs = 0): Promise<Pending> {
  const src = flow.source?.path;
  if (!src)
    throw new ScdError('USAGE', 'no input: the flow has no source.path and no --input was given', {
      file: flow.origin,
      fix: 'add --input FILE, or set source: { path: ... } in the flow',
    });
  const remote = isObjectStoreUrl(src);
  const candidates = named(src, await landingFiles(driver, flow, src));
  const hash = remote ? hashesOf(driver) : localHashes;
  await ensureFilesTable(driver, names);
  const applied = await recordedFiles(driver, names, src);
  const byName = new Map(applied.map((r) => [r.name, r]));
  const present = new Set(candidates.map((f) => f.name));
  // Records whose file is gone from under its name: the files a renamed or moved one may be.
  const orphans = applied.filter((r) => !present.has(r.name));
  const out: Pending = { files: [], records: [], renamed: [], warnings: [], alreadyApplied: 0 };
  const now = Date.now();
  const touched = candidates.filter((f) => byName.has(f.name) && !sameStat(byName.get(f.name)!, f));
  const fresh = new Set(candidates.filter((f) => !byName.has(f.name) && !(minAgeMs && now - f.mtimeMs < minAgeMs)));
  const hashes = await hash([...touched, ...fresh].map((f) => f.path));
  const record = (f: Named): FileRecord => ({ path: f.name, size: f.size, mtimeMs: f.mtimeMs, hash: hashes.get(f.path)! });
  for (const f of candidates) {
    const seen = byName.get(f.name);
    if (seen) {
      if (sameStat(seen, f) || hashes.get(f.path) === seen.hash) {
        out.alreadyApplied++;
        if (seen.recorded !== f.name) out.renamed.push({ from: seen.recorded, to: { path: f.name, size: f.size, mtimeMs: f.mtimeMs, hash: seen.hash }, version: seen.version });
        continue;
      }
      out.warnings.push(
        `${remote ? f.path : path.relative(process.cwd(), f.path) || f.path} changed after commit ${seen.version} applied it; it is not applied again ` +
          `(fix: put new changes in a new file)`,
      );
      continue;
    }
    if (!fresh.has(f)) continue;
    const at = orphans.findIndex((o) => o.size === f.size && o.hash === hashes.get(f.path));
    if (at >= 0) {
      const [was] = orphans.splice(at, 1);
      out.alreadyApplied++;
      out.renamed.push({ from: was!.recorded, to: record(f), version: was!.version });
      continue;
    }
    out.files.push({ path: f.path, format: f.format });
    out.records.push(record(f));
  }
  return out;
}

/** Listed files with their names inside the source. */
function named(src: string, files: Listed[]): Named[] {
  return files.map((f) => ({ ...f, name: nameInSource(src, f.path) ?? f.path }));
}

/**
 * Every data file of a landing folder (or the single source file), applied or not: a local one
 * listed by scd, one at an object-store URL by the engine.
 */
function landingFiles(driver: Driver, flow: Flow, src: string): Promise<Listed[]> {
  return isObjectStoreUrl(src) ? storeFiles(driver, flow, src) : Promise.resolve(localFiles(flow, src));
}

/**
 * How many files of the flow's landing folder no commit applied (`scd status`), reading no file
 * and writing nothing: before any apply (no files table), all of them. Without reading, a file
 * under a name no record has counts as applied when a record whose name no file has has its size
 * and time (a folder moved with its files' times); `scd apply` decides by content.
 */
export async function pendingCount(driver: Driver, flow: Flow, names: StoreNames, src: string): Promise<{ pending: number; changed: string[] }> {
  const candidates = named(src, await landingFiles(driver, flow, src));
  if (!(await driver.columns(names.files))) return { pending: candidates.length, changed: [] };
  const applied = await recordedFiles(driver, names, src);
  const byName = new Map(applied.map((r) => [r.name, r]));
  const present = new Set(candidates.map((f) => f.name));
  const orphans = applied.filter((r) => !present.has(r.name));
  const pending = candidates.filter((f) => {
    if (byName.has(f.name)) return false;
    const at = orphans.findIndex((o) => sameStat(o, f));
    if (at < 0) return true;
    orphans.splice(at, 1);
    return false;
  }).length;
  // An applied file whose size or time moved is changed only if its content did (as pendingFiles tells).
  const remote = isObjectStoreUrl(src);
  const touched = candidates.filter((f) => byName.has(f.name) && !sameStat(byName.get(f.name)!, f));
  const hashes = touched.length ? await (remote ? hashesOf(driver) : localHashes)(touched.map((f) => f.path)) : new Map<string, string>();
  const changed = touched
    .filter((f) => hashes.get(f.path) !== byName.get(f.name)!.hash)
    .map((f) => `${remote ? f.path : path.relative(process.cwd(), f.path) || f.path} (applied by commit ${byName.get(f.name)!.version})`);
  return { pending, changed };
}

/** Each local file's SHA-256, one file at a time (a folder of thousands opens one at once). */
async function localHashes(paths: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const p of paths) out.set(p, await sha256(p));
  return out;
}

const sameStat = (seen: Recorded, f: Listed) => seen.size === f.size && seen.mtimeMs === f.mtimeMs;

/** A local landing folder (or file), listed and read by scd. */
function localFiles(flow: Flow, src: string): Listed[] {
  if (!existsSync(src))
    throw new ScdError('SOURCE_INVALID', `source path ${src} does not exist`, { file: flow.origin, field: 'source.path', fix: 'create the folder or correct the path' });
  const files = statSync(src).isDirectory() ? folderFiles(src, flow.source?.format) : [{ path: src, format: formatOf(src, flow.source?.format) }];
  return files.map((f) => {
    const st = statSync(f.path);
    return { ...f, size: st.size, mtimeMs: Math.trunc(st.mtimeMs) };
  });
}

/** A landing folder (or file) at an object-store URL: listed by the engine, which reads it. */
async function storeFiles(driver: Driver, flow: Flow, src: string): Promise<Listed[]> {
  if (!driver.dialect.capabilities.objectStoreInputs)
    throw new ScdError('SOURCE_INVALID', `source path ${src} is an object-store URL, which only a Spark database reads itself (this flow's database is ${driver.dialect.name})`, {
      file: flow.origin,
      field: 'source.path',
      fix: 'land the files in a local folder, or run the flow on Spark (--db sc://…)',
    });
  if (!driver.listFolder) throw new Error(`the ${driver.dialect.name} driver reads object-store URLs but cannot list a folder of them: give it listFolder`);
  const declared = flow.source?.format;
  return (await driver.listFolder(src)).filter((f) => isDataFile(f.path, declared)).map((f) => ({ ...f, format: formatOf(f.path, declared) }));
}

/** The engine's hashes of files it lists (a missing hook names the dialect). */
function hashesOf(driver: Driver): (paths: string[]) => Promise<Map<string, string>> {
  if (!driver.hashFiles) throw new Error(`the ${driver.dialect.name} driver lists object-store folders but cannot hash their files: give it hashFiles`);
  return (paths) => driver.hashFiles!(paths);
}

/**
 * A commit's files were applied by another commit while it waited for the target (a concurrent
 * apply of the same landing folder): it rolls back, and its caller lists the pending files again.
 */
export class FilesTaken extends ScdError {
  constructor(
    readonly taken: Array<{ path: string; version: number }>,
    origin?: string,
  ) {
    const first = taken[0]!;
    super(
      'NOT_APPLIED',
      `${first.path}${taken.length > 1 ? ` and ${taken.length - 1} more file(s)` : ''} were applied by commit ${first.version} while this apply waited for the target; nothing was applied`,
      {
        file: origin,
        fix: 'run again: only the files not applied yet are applied',
      },
    );
  }
}

/**
 * Inside the commit's transaction, once it holds the target's lock: refuse (FilesTaken) if another
 * commit recorded any of these files since they were listed. The listing before the lock is only a
 * guess (staging runs before the transaction); this check under the lock decides, so two applies
 * of one folder never apply a file twice (docs/decisions/
 * 0034-a-landing-file-is-claimed-under-the-lock.md).
 */
export async function claimFiles(driver: Driver, names: StoreNames, records: FileRecord[], origin?: string): Promise<void> {
  // No file table yet: no file is recorded (and creating it here could conflict with another's).
  if (!records.length || !(await driver.columns(names.files))) return;
  const rows = await driver.query(`SELECT path, version FROM ${driver.dialect.quote(names.files)} WHERE target = $1`, [names.target]);
  const recorded = new Map(rows.map((r) => [String(r.path), Number(r.version)]));
  const taken = records.filter((r) => recorded.has(r.path)).map((r) => ({ path: r.path, version: recorded.get(r.path)! }));
  if (taken.length) throw new FilesTaken(taken, origin);
}

/**
 * Record applied files (inside the commit's transaction, after claimFiles): a file is recorded
 * once, by the commit that applied it; a second record of a path fails on the primary key. An
 * applied file met under another name (`renamed`) keeps its commit and takes its name now, unless
 * another commit renamed that record meanwhile.
 */
export async function recordFiles(driver: Driver, names: StoreNames, records: FileRecord[], version: number, renamed: Renamed[] = []): Promise<void> {
  const d = driver.dialect;
  const insert = (r: FileRecord, v: number) =>
    driver.run(`INSERT INTO ${d.quote(names.files)} VALUES ($1, $2, $3, $4, $5, CAST($6 AS ${d.types.int}))`, [names.target, r.path, r.size, r.mtimeMs, r.hash, v]);
  for (const r of records) await insert(r, version);
  if (!renamed.length) return;
  const rows = await driver.query(`SELECT path FROM ${d.quote(names.files)} WHERE target = $1`, [names.target]);
  const recorded = new Set(rows.map((r) => String(r.path)));
  for (const r of renamed) {
    if (!recorded.has(r.from) || recorded.has(r.to.path)) continue;
    await driver.run(`DELETE FROM ${d.quote(names.files)} WHERE target = $1 AND path = $2`, [names.target, r.from]);
    await insert(r.to, r.version);
    recorded.delete(r.from);
    recorded.add(r.to.path);
  }
}
