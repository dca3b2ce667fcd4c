/**
 * Reading, as a property: the same events written as files in several textual styles
 * (key order, spacing, number forms, the sequence as instants in mixed ISO-8601 forms, CRLF or LF,
 * one file or several), with random bad lines mixed
 * in (not objects, truncated objects, bytes that are not UTF-8, values of the wrong kind, missing
 * keys, null sequences). The target must equal the reference model applied to the good records,
 * and the quarantine must hold exactly the bad lines, each with its text as written.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyFiles, defineFlow, readTargetWith, resolveInputs } from '../../src/index.js';
import { engines } from '../engines.js';
import { describeScenario, fcParams, KINDS, PROPERTY_TIMEOUT_MS, scenarioArb } from './arbitraries.js';
import { Model, type Rec, toEvent } from './model.js';

/** Engines whose reader keeps every record as written (docs/TYPES.md). */
const reading = engines;

const styleArb = fc.record({
  rotate: fc.nat(7),
  spaced: fc.boolean(),
  /** Integers written as 3.0 or 3e0 in some records (the column is then a double: the same numbers). */
  floats: fc.boolean(),
  /** The sequence written as instants, in the ISO-8601 forms CDC exports mix (a timestamp column: the same order). */
  times: fc.boolean(),
  crlf: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  files: fc.integer({ min: 1, max: 3 }),
  bad: fc.array(fc.tuple(fc.constantFrom('array', 'number', 'truncated', 'binary', 'nokey', 'nullseq', 'wrongkind'), fc.nat(1000)), { maxLength: 5 }),
});

type Line = { text: string | Buffer; bad?: string; record?: Rec; keys?: string[] };

/** Sequence n as an instant: n seconds after BASE_MS. */
const BASE_MS = Date.UTC(2025, 4, 1, 9, 0, 0);

/**
 * Sequence n as an instant in one of the ISO-8601 forms seen in CDC exports, picked by `form`:
 * with or without a fraction, `T` or a space, `Z` or an offset written `+02:00`, `+0200`, `+02`.
 */
function instant(n: number, form: number): string {
  const at = (offsetMinutes: number) => new Date(BASE_MS + n * 1000 + offsetMinutes * 60_000).toISOString().slice(0, 23);
  switch (form % 6) {
    case 0:
      return `${at(0).slice(0, 19)}Z`;
    case 1:
      return `${at(0)}Z`;
    case 2:
      return `${at(0).replace('T', ' ')}Z`;
    case 3:
      return `${at(120).slice(0, 19)}+02:00`;
    case 4:
      return `${at(120).replace('T', ' ')}+0200`;
    default:
      return `${at(-330).slice(0, 19)}-05:30`;
  }
}

/** A target row's instants (the sequence column, its version's start and end) as the model's numbers. */
function secondsOf(row: Record<string, unknown>, columns: string[]): Record<string, unknown> {
  const out = { ...row };
  for (const c of columns) {
    const v = out[c];
    if (v !== null && v !== undefined) out[c] = (new Date(v instanceof Date ? v : String(v)).getTime() - BASE_MS) / 1000;
  }
  return out;
}

/** One record as a JSON text in the given style (keys rotated, spacing, number forms, instant forms). */
function render(r: Rec, i: number, s: { rotate: number; spaced: boolean; floats: boolean; times: boolean }): string {
  const order = keyOrder(r, i, s);
  const value = (v: unknown, j: number, key: string) =>
    key === 'seq' && s.times && typeof v === 'number'
      ? JSON.stringify(instant(v, i + j))
      : typeof v === 'number' && s.floats && (i + j) % 3 === 0
        ? j % 2
          ? `${v}.0`
          : `${v}e0`
        : JSON.stringify(v);
  const sep = s.spaced ? ', ' : ',';
  const colon = s.spaced ? ' : ' : ':';
  return `{${order.map((key, j) => `${JSON.stringify(key)}${colon}${value(r[key], j, key)}`).join(sep)}}`;
}

/** The order a record's keys are written in: rotated by `rotate` places per record. */
function keyOrder(r: Rec, i: number, s: { rotate: number }): string[] {
  const keys = Object.keys(r);
  const k = keys.length ? (s.rotate * i) % keys.length : 0;
  return [...keys.slice(k), ...keys.slice(0, k)];
}

function badLine(kind: string, r: Rec | undefined, times: boolean): Line {
  const n = typeof r?.seq === 'number' ? r.seq : 1;
  const seq = times ? JSON.stringify(instant(n, 0)) : n;
  switch (kind) {
    case 'array':
      return { text: '[1, 2, 3]', bad: 'not a JSON object' };
    case 'number':
      return { text: '42', bad: 'not a JSON object' };
    case 'truncated':
      return { text: `{"id": 1, "seq": ${seq}, "a"`, bad: 'malformed JSON' };
    case 'binary':
      return { text: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), bad: 'invalid UTF-8' };
    case 'nokey':
      return { text: `{"seq": ${seq}}`, bad: 'key column' };
    case 'nullseq':
      return { text: `{"id": 1, "seq": null}`, bad: 'sequence column' };
    default:
      return { text: `{"id": 1, "seq": ${seq}, "a": "not a number"}`, bad: 'does not fit column "a"' };
  }
}

const visible = (b: string | Buffer) => (typeof b === 'string' ? b : '{\\xFF\\xFE}');

for (const engine of reading) {
  describe(`${engine.name}: reading any textual style`, () => {
    const kind = KINDS[0]!;
    it(
      'the target is the model of the good records; the quarantine holds exactly the bad lines, as written',
      async () => {
        await fc.assert(
          fc.asyncProperty(scenarioArb({ ...kind, tupleSequence: false }), styleArb, async (sc, style) => {
            // A value of the wrong kind is only bad where the column's other values say numbers.
            const numbersInA = sc.records.filter((r) => typeof r.a === 'number').length;
            const bad = style.bad.filter(([k]) => k !== 'wrongkind' || numbersInA >= 4 * style.bad.length + 2);
            const lines: Line[] = sc.records.map((r, i) => ({ text: render(r, i, style), record: r, keys: keyOrder(r, i, style) }));
            for (const [k, at] of bad) lines.splice(at % (lines.length + 1), 0, badLine(k, sc.records[at % sc.records.length], style.times));
            const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-styles-'));
            const driver = await engine.open();
            try {
              const per = Math.ceil(lines.length / style.files);
              const files: string[] = [];
              const expectedBad: Array<[string, number, string]> = [];
              for (let f = 0; f * per < lines.length; f++) {
                const chunk = lines.slice(f * per, (f + 1) * per);
                const nl = style.crlf[f] ? '\r\n' : '\n';
                const name = path.join(dir, `part_${f}.ndjson`);
                writeFileSync(name, Buffer.concat(chunk.map((l) => Buffer.concat([Buffer.from(l.text), Buffer.from(nl)]))));
                files.push(name);
                chunk.forEach((l, j) => {
                  if (l.bad) expectedBad.push([name, j + 1, visible(l.text)]);
                });
              }
              // A new target's columns (which order ties) are its first applied record's, as written.
              const firstApplied = lines.find((l) => !l.bad && l.record && toEvent(sc.spec, l.record));
              const model = new Model(firstApplied ? { ...sc.spec, sourceColumns: firstApplied.keys! } : sc.spec);
              const counts = model.apply(sc.records);
              const flow = defineFlow(sc.flow);
              const r = await applyFiles(driver, flow, resolveInputs(files));
              const why = `${describeScenario(sc)}\nstyle ${JSON.stringify(style)}`;
              const target = await readTargetWith(driver, flow);
              const instants = style.times ? ['seq', '__START_AT', '__END_AT'] : [];
              expect(
                target.map((row) => secondsOf(row, instants)),
                why,
              ).toEqual(model.target());
              expect(r.rowsRead, why).toBe(lines.length);
              expect(r.quarantined, why).toBe(counts.quarantined + bad.length);
              expect(r.rowsRead, why).toBe(r.eventsApplied + r.duplicates + r.quarantined + r.dropped + r.skipped);
              const q = await driver.query(`SELECT file, CAST(line AS INTEGER) AS line, reason, raw FROM "_scd_${sc.flow.target}_quarantine" ORDER BY file, line`);
              const inQuarantine = new Set(q.map((x) => `${x.file}:${x.line}:${x.raw}`));
              for (const [file, line, raw] of expectedBad) expect(inQuarantine.has(`${file}:${line}:${raw}`), `${file}:${line} ${raw}\n${why}`).toBe(true);
            } finally {
              await driver.close();
              rmSync(dir, { recursive: true, force: true });
            }
          }),
          fcParams<[unknown, unknown]>(12, engine.name) as never,
        );
      },
      PROPERTY_TIMEOUT_MS,
    );
  });
}
