import type { WriteStream } from 'node:fs';

/** Write with back-pressure. */
export function write(stream: WriteStream, text: string): Promise<void> | void {
  if (!stream.write(text)) return new Promise((resolve) => stream.once('drain', () => resolve()));
}

export function end(stream: WriteStream): Promise<void> {
  return new Promise((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
}
