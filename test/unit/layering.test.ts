/**
 * The layers of src/ (docs/DESIGN.md "The layers"): a file imports only its own folder and the
 * folders below it, and no file reaches itself through its imports. Type-only imports against the
 * order are allowed only where DESIGN.md names them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../src');
/** Top to bottom, as DESIGN.md draws them (index.ts, the library's exports, above all). */
const LAYERS = ['index.ts', 'cli', 'serve', 'api.ts', 'query', 'sources', 'plan', 'execute', 'store', 'flow', 'typing', 'dialects', 'files', 'errors.ts'];
/** Type-only imports against the order (importing file's folder → imported file): DESIGN.md's exceptions (none). */
const TYPE_EXCEPTIONS = new Set<string>([]);

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [path.relative(SRC, p)] : [];
  });
}

/** Every relative import and re-export of a file, static or dynamic. */
function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const target = (spec: string) => path.normalize(path.join(path.dirname(file), spec.replace(/\.js$/, '.ts')));
  return [
    ...[...text.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+'(\.[^']+)'/gms)].map((m) => ({ from: file, to: target(m[2]!), typeOnly: !!m[1] })),
    ...[...text.matchAll(/\bimport\('(\.[^']+)'\)/g)].map((m) => ({ from: file, to: target(m[1]!), typeOnly: false })),
  ];
}

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf);
const layerOf = (file: string) => LAYERS.indexOf(file.split(path.sep)[0]!);

describe('the layers of src/', () => {
  it('every file belongs to a layer, and every import names a file that exists', () => {
    expect(files.filter((f) => layerOf(f) < 0)).toEqual([]);
    expect(imports.filter((i) => !files.includes(i.to)).map((i) => `${i.from} → ${i.to}`)).toEqual([]);
    expect(imports.length).toBeGreaterThan(files.length);
  });

  it('imports go down the layers (type-only exceptions as DESIGN.md names them)', () => {
    const against = imports.filter((i) => layerOf(i.to) < layerOf(i.from));
    expect(against.filter((i) => !i.typeOnly).map((i) => `${i.from} → ${i.to}`)).toEqual([]);
    expect([...new Set(against.map((i) => `${i.from.split(path.sep)[0]} → ${i.to}`))].filter((e) => !TYPE_EXCEPTIONS.has(e))).toEqual([]);
  });

  it('no file reaches itself through its imports (types aside)', () => {
    const next = new Map<string, string[]>();
    for (const i of imports) if (!i.typeOnly) next.set(i.from, [...(next.get(i.from) ?? []), i.to]);
    // A depth-first walk: a file met again while still on the path closes a circle.
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (f: string, trail: string[]) => {
      state.set(f, 'open');
      for (const t of next.get(f) ?? []) {
        if (state.get(t) === 'open') circles.push([...trail.slice(trail.indexOf(t)), f, t].join(' → '));
        else if (!state.has(t)) visit(t, [...trail, f]);
      }
      state.set(f, 'done');
    };
    for (const f of files) if (!state.has(f)) visit(f, []);
    expect(circles).toEqual([]);
  });
});
