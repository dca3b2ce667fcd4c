import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { ScdError } from '../errors.js';
import type { FileFormat, InputFile } from '../dialects/driver.js';

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

/** Files named on the command line (or in code): each must exist; folders expand to their files. */
export function resolveInputs(paths: string[], declared?: FileFormat | 'debezium'): InputFile[] {
  const out: InputFile[] = [];
  for (const p of paths) {
    const abs = path.resolve(p);
    if (!existsSync(abs))
      throw new ScdError('INPUT_UNREADABLE', `input ${p} does not exist`, { fix: 'check the path (relative to the current directory)' });
    if (statSync(abs).isDirectory()) out.push(...folderFiles(abs, declared));
    else out.push({ path: abs, format: formatOf(abs, declared) });
  }
  return out;
}

/** Data files of a folder, in name order (hidden and temporary files are skipped). */
export function folderFiles(dir: string, declared?: FileFormat | 'debezium'): InputFile[] {
  return readdirSync(dir)
    .filter((n) => !n.startsWith('.') && !n.startsWith('_') && (declared || BY_EXTENSION[path.extname(n).toLowerCase()]))
    .sort()
    .map((n) => path.join(dir, n))
    .filter((p) => statSync(p).isFile())
    .map((p) => ({ path: p, format: formatOf(p, declared) }));
}
