import { closeSync, openSync, readSync } from 'node:fs';
import { checkText, type Newline } from '../../files/text-records.js';
import type { CopySource } from './postgres-client.js';
import { postgresDialect } from './postgres-dialect.js';

/**
 * COPY options that read each line of a file as one text field, as written: a delimiter, quote
 * and escape (U+0001, U+0002) that the files copyLines accepts never hold. An empty line is NULL.
 */
export const LINE_COPY_OPTIONS = `WITH (FORMAT csv, DELIMITER E'\\x01', QUOTE E'\\x02', ESCAPE E'\\x02')`;

/**
 * The line ending when COPY may split the file into lines itself and give each line exactly as
 * written; undefined when the file must be normalized first (files/text-records.ts):
 * - files/text-records.ts `checkText` passes it (UTF-8, no U+0001, one kind of line ending) and
 *   that ending is LF or CRLF (COPY's own newline detection; a lone CR goes through normalization);
 * - no NUL byte (PostgreSQL text cannot hold one) and no U+0002 (COPY's quote here);
 * - no line that is exactly `\.`: COPY takes it for the end of its input and silently stops.
 * Native buffer searches only, no per-byte JavaScript.
 */
export function copyPlain(file: string): Newline | undefined {
  const plain = checkText(file).plain;
  if (plain !== '\n' && plain !== '\r\n') return undefined;
  return hasCopyHazard(file) ? undefined : plain;
}

const END_MARK = Buffer.from('\\.');

function hasCopyHazard(file: string, chunkSize = 4 * 1024 * 1024): boolean {
  const fd = openSync(file, 'r');
  const keep = 2; // bytes carried over: a `\.` line may straddle two chunks
  const buf = Buffer.alloc(chunkSize + keep + 1);
  let carry = 0;
  let atStart = true;
  try {
    for (;;) {
      const n = readSync(fd, buf, carry, chunkSize, null);
      const len = carry + n;
      const view = buf.subarray(0, len);
      if (n > 0 && (view.indexOf(0x00, carry) >= 0 || view.indexOf(0x02, carry) >= 0)) return true;
      for (let i = view.indexOf(END_MARK); i >= 0; i = view.indexOf(END_MARK, i + 1)) {
        const before = i === 0 ? (atStart ? 0x0a : -1) : view[i - 1];
        const after = i + 2 < len ? view[i + 2] : n === 0 ? 0x0a : -1;
        // A mark at the very end of this chunk is decided with the next one (it is carried).
        if (after === -1 && n > 0) continue;
        if ((before === 0x0a || before === 0x0d) && (after === 0x0a || after === 0x0d)) return true;
      }
      if (n === 0) return false;
      const from = Math.max(0, len - keep);
      atStart = false;
      // The carried bytes keep the byte before them, so a mark right after them is judged rightly.
      const start = Math.max(0, from - 1);
      buf.copy(buf, 0, start, len);
      carry = len - start;
    }
  } finally {
    closeSync(fd);
  }
}

/** What staging needs from the driver to load a file. */
export interface CopyHost {
  run(sql: string, params?: unknown[]): Promise<void>;
  copyFrom(sql: string, source: CopySource): Promise<void>;
  /**
   * Staging makes the helper table `table` (returned): the driver drops it with the commit's
   * scratch (discardScratch) if staging has not, also after a failure, so it never outlives the
   * commit and is never there when staging makes it.
   */
  stagingTable(table: string): string;
}

/**
 * A new temporary table `table` ("n" bigint: the line number from 1, "raw" text: the line as
 * written, without its line ending; NULL for an empty line) of a file copyPlain passes.
 */
export async function copyLines(host: CopyHost, file: string, table: string): Promise<void> {
  const q = postgresDialect.quote;
  await host.run(`CREATE TEMP TABLE ${q(host.stagingTable(table))} (n bigserial, raw text)`);
  await host.copyFrom(`COPY ${q(table)} (raw) FROM STDIN ${LINE_COPY_OPTIONS}`, { file });
}
