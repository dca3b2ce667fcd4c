import { createWriteStream } from 'node:fs';
import { LINE_COLUMN } from '../dialects/driver.js';
import { isInteger, JsonSyntaxError, type Member, memberMap, type Span, scanDocument, textOf } from '../files/json-text.js';
import { CONNECTORS, DEBEZIUM_COLUMNS, type PositionPart } from '../flow/debezium-positions.js';
import { decodeLine, eachLine, end, write } from './lines.js';

export interface DebeziumScan {
  good: number;
  bad: number;
  /** Kafka tombstones (a null value after a delete): skipped by design, counted. */
  tombstones: number;
}

export interface FlattenOptions {
  /**
   * The position columns to write, null where a record has none: those of an existing target
   * (its stored model decides). Default: the columns of each record's own connector.
   */
  positions?: string[];
}

const OPS = new Set(['c', 'r', 'u', 'd', 't']);
const TOMBSTONE = 'tombstone';

/**
 * Unwrap Debezium envelopes (with or without the Kafka Connect schema/payload wrapper) into flat
 * NDJSON rows: `c`/`r`/`u` carry `after`, `d` carries `before` (its key), `t` carries nothing
 * (an image may also be given as JSON text, as MongoDB's connector writes it). Each row gets
 * `_op`, `_ts_ms` (source.ts_ms, else the envelope's ts_ms), the connector's position columns
 * (debezium-positions.ts) and its line number. Lines that are not envelopes go to `badOut` as
 * {line, reason, raw}, raw being the line as written. Streams line by line.
 *
 * Invariant: every value of a row is the text the line holds for it (json-text.ts); none passes
 * through a JavaScript number.
 */
export async function flattenDebezium(file: string, goodOut: string, badOut: string, options: FlattenOptions = {}): Promise<DebeziumScan> {
  const good = createWriteStream(goodOut);
  const bad = createWriteStream(badOut);
  const counts: DebeziumScan = { good: 0, bad: 0, tombstones: 0 };
  await eachLine(file, (bytes, line) => {
    const reject = (reason: string, raw: string) => {
      counts.bad++;
      return write(bad, JSON.stringify({ line, reason, raw }) + '\n');
    };
    const decoded = decodeLine(bytes);
    if ('reason' in decoded) return reject(decoded.reason, decoded.raw);
    const text = decoded.text;
    if (text.trim() === '') return;
    const row = flattenEnvelope(text, options.positions);
    if (row === TOMBSTONE) {
      counts.tombstones++;
      return;
    }
    if (typeof row !== 'string') return reject(row.reason, text);
    counts.good++;
    return write(good, `${row},${JSON.stringify(LINE_COLUMN)}:${line}}\n`);
  });
  await Promise.all([end(good), end(bad)]);
  return counts;
}

type Members = Map<string, Member>;

/** A row image: the text it is written in and its members. */
interface Image {
  text: string;
  members: Members;
}

/**
 * One envelope → its flat row as JSON text without the closing brace (the caller adds the line
 * number), 'tombstone', or the reason it is not an envelope.
 */
export function flattenEnvelope(text: string, positions?: string[]): string | typeof TOMBSTONE | { reason: string } {
  const not = (reason: string) => ({ reason });
  let doc: Span;
  try {
    doc = scanDocument(text);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return not(`malformed JSON: ${e.message}`);
    throw e;
  }
  if (doc.kind === 'null') return TOMBSTONE;
  if (doc.kind !== 'object') return not('not a Debezium envelope (not a JSON object)');
  let env = memberMap(text, doc);
  const payload = env.get('payload');
  if (payload && (env.has('schema') || env.size === 1)) {
    if (payload.value.kind === 'null') return TOMBSTONE;
    if (payload.value.kind !== 'object') return not('not a Debezium envelope (payload is not an object)');
    env = memberMap(text, payload.value);
  }
  const opMember = env.get('op');
  if (!opMember) return not('not a Debezium envelope (no "op")');
  const opText = textOf(text, opMember.value);
  const op = opMember.value.kind === 'string' ? (JSON.parse(opText) as string) : undefined;
  if (op === undefined || !OPS.has(op)) return not(`unknown Debezium op ${opText.length > 80 ? opText.slice(0, 80) + '…' : opText}`);
  const source = env.get('source');
  const src: Members = source?.value.kind === 'object' ? memberMap(text, source.value) : new Map();

  let image: Image | undefined = { text: '', members: new Map() };
  if (op === 'd') {
    image = imageOf(text, env.get('before'));
    if (!image) return not('a Debezium delete without "before" (its key)');
  } else if (op !== 't') {
    image = imageOf(text, env.get('after'));
    if (!image) return not(`a Debezium "${op}" event without "after"`);
  }

  const number = (m: Member | undefined) => (m?.value.kind === 'number' ? textOf(text, m.value) : undefined);
  const added = new Map<string, string>([
    [DEBEZIUM_COLUMNS.op, opText],
    [DEBEZIUM_COLUMNS.tsMs, number(src.get('ts_ms')) ?? number(env.get('ts_ms')) ?? 'null'],
  ]);
  const own = positionOf(text, src);
  for (const column of positions ?? [...own.keys()]) {
    const value = own.get(column) ?? 'null';
    if (typeof value !== 'string') return value;
    added.set(column, value);
  }

  // The envelope's columns take the place of the image's members of the same name.
  const fields: string[] = [];
  for (const m of image.members.values()) if (!added.has(m.name) && m.name !== LINE_COLUMN) fields.push(`${textOf(image.text, m.key)}:${oneLine(textOf(image.text, m.value))}`);
  for (const [column, value] of added) fields.push(`${JSON.stringify(column)}:${value}`);
  return `{${fields.join(',')}`;
}

/** A before/after image: an object, or JSON text holding one (MongoDB); undefined otherwise. */
function imageOf(text: string, m: Member | undefined): Image | undefined {
  if (m?.value.kind === 'object') return { text, members: memberMap(text, m.value) };
  if (m?.value.kind !== 'string') return undefined;
  const inner = JSON.parse(textOf(text, m.value)) as string;
  try {
    const doc = scanDocument(inner);
    return doc.kind === 'object' ? { text: inner, members: memberMap(inner, doc) } : undefined;
  } catch (e) {
    if (e instanceof JsonSyntaxError) return undefined;
    throw e;
  }
}

/**
 * A value's text on one line: a raw CR or LF in valid JSON is whitespace (a string holds them
 * escaped), so it becomes a space.
 */
const oneLine = (value: string) => (/[\r\n]/.test(value) ? value.replace(/[\r\n]/g, ' ') : value);

/**
 * The position columns of the record's connector (the first whose fields `source` has), each as
 * JSON text ('null' for a part the record lacks) or why its field cannot be a position.
 */
function positionOf(text: string, src: Members): Map<string, string | { reason: string }> {
  const present = (field: string) => {
    const m = src.get(field);
    return m && m.value.kind !== 'null' ? m : undefined;
  };
  const out = new Map<string, string | { reason: string }>();
  const connector = CONNECTORS.find((c) => c.parts.some((p) => present(p.field)));
  for (const part of connector?.parts ?? []) {
    const m = present(part.field) ?? (part.orElse ? present(part.orElse) : undefined);
    const value = m ? positionText(text, m.value, part) : 'null';
    const raw = m ? textOf(text, m.value) : '';
    const kind = part.kind === 'integer' ? 'an integer' : 'a string';
    out.set(part.column, value ?? { reason: `source.${m!.name} ${raw.length > 80 ? raw.slice(0, 80) + '…' : raw} is not ${kind}` });
  }
  return out;
}

/** A position value as JSON text of its kind, or undefined when it is not one. */
function positionText(text: string, value: Span, part: PositionPart): string | undefined {
  const raw = textOf(text, value);
  if (part.kind === 'text') return value.kind === 'string' ? raw : undefined;
  if (isInteger(text, value)) return raw;
  if (value.kind !== 'string') return undefined;
  // Digits given as text (Oracle's scn, offsets): the integer they write, by BigInt, exactly.
  const digits = JSON.parse(raw) as string;
  return /^\d+$/.test(digits) ? BigInt(digits).toString() : undefined;
}
