import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Driver, FileFormat, InputFile } from '../dialects/driver.js';
import { ScdError } from '../errors.js';
import { isObjectStoreUrl } from '../files/object-store.js';
import type { Flow } from '../flow/flow.js';

const BY_EXTENSION: Record<string, FileFormat> = {
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.json': 'json',
  '.csv': 'csv',
  '.parquet': 'parquet',
};

/** The format of a file: the flow's source.format, else its extension. */
export function formatOf(file: string, declared?: FileFormat | 'debezium'): FileFormat {
  if (declared === 'debezium') return 'ndjson';
  if (declared) return declared;
  const f = BY_EXTENSION[path.extname(file).toLowerCase()];
  if (!f)
    throw new ScdError('INPUT_UNREADABLE', `cannot tell the format of ${file} from its extension`, {
      fix: 'use .ndjson, .jsonl, .json, .csv or .parquet, or set source.format in the flow',
    });
  return f;
}

/**
 * Files named on the command line (or in code): each must exist; folders expand to their files.
 * An object-store URL is the engine's to read (checkInputsReadable): kept as written, one file.
 */
export function resolveInputs(paths: string[], declared?: FileFormat | 'debezium'): InputFile[] {
  const out: InputFile[] = [];
  for (const p of paths) {
    if (isObjectStoreUrl(p)) {
      if (p.endsWith('/'))
        throw new ScdError('INPUT_UNREADABLE', `input ${p} names a folder of an object store, which scd cannot list`, {
          fix: 'name its files one by one (--input URL --input URL …)',
        });
      out.push({ path: p, format: formatOf(p, declared) });
      continue;
    }
    const abs = path.resolve(p);
    if (!existsSync(abs)) throw new ScdError('INPUT_UNREADABLE', `input ${p} does not exist`, { fix: 'check the path (relative to the current directory)' });
    if (statSync(abs).isDirectory()) out.push(...folderFiles(abs, declared));
    else out.push({ path: abs, format: formatOf(abs, declared) });
  }
  return out;
}

/** Whether a file of a folder is a data file: the flow's format is declared, or its extension tells one. */
export const isDataFile = (name: string, declared?: FileFormat | 'debezium'): boolean => !!(declared || BY_EXTENSION[path.extname(name).toLowerCase()]);

/** Data files of a folder, in name order (hidden and temporary files are skipped). */
export function folderFiles(dir: string, declared?: FileFormat | 'debezium'): InputFile[] {
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.') && !n.startsWith('_') && isDataFile(n, declared))
    .sort()
    .map((n) => path.join(dir, n))
    .filter((p) => statSync(p).isFile())
    .map((p) => ({ path: p, format: formatOf(p, declared) }));
}

/**
 * Refuse, before anything is read or written, an object-store URL that this commit cannot read:
 * on an engine that does not read them itself, or for a flow whose records scd unwraps itself
 * (Debezium envelopes, read line by line on this machine).
 */
export function checkInputsReadable(driver: Driver, flow: Flow, files: InputFile[]): void {
  const url = files.find((f) => isObjectStoreUrl(f.path))?.path;
  if (url === undefined) return;
  if (!driver.dialect.capabilities.objectStoreInputs)
    throw new ScdError('INPUT_UNREADABLE', `input ${url} is an object-store URL, which only a Spark database reads itself (this flow's database is ${driver.dialect.name})`, {
      file: flow.origin,
      fix: 'copy the file to a local path, or run the flow on Spark (--db sc://…)',
    });
  if (flow.source?.format === 'debezium')
    throw new ScdError('INPUT_UNREADABLE', `input ${url} is an object-store URL, and scd reads Debezium envelopes itself, on this machine`, {
      file: flow.origin,
      fix: 'copy the file to a local path',
    });
}
