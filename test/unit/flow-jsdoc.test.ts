/**
 * Every flow field explains itself in an editor: hovering a field of what defineFlow takes
 * (FlowInput, as the package ships it: dist/index.d.ts, built by `npm run build`) shows its JSDoc.
 * Asked of TypeScript's language service, as an editor asks it, for every field of the schema,
 * of `source` and of an expectation.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { expectationSchema, flowSchema, sourceSchema } from '../../src/flow/schema.js';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

/** The hover text of each `probe.<field>` access in `code`. */
function hovers(code: string, fields: string[]): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-jsdoc-'));
  try {
    const file = path.join(dir, 'probe.ts');
    writeFileSync(file, code);
    const options: ts.CompilerOptions = {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
    };
    const service = ts.createLanguageService({
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (f) => (ts.sys.fileExists(f) ? ts.ScriptSnapshot.fromString(ts.sys.readFile(f)!) : undefined),
      getCurrentDirectory: () => dir,
      getCompilationSettings: () => options,
      getDefaultLibFileName: ts.getDefaultLibFilePath,
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
    });
    return Object.fromEntries(
      fields.map((f) => {
        const info = service.getQuickInfoAtPosition(file, code.indexOf(`probe.${f};`) + 'probe.'.length + 1);
        return [f, info ? ts.displayPartsToString(info.documentation) : ''];
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('flow fields have JSDoc', () => {
  it('every field of a flow, of its source and of an expectation shows what it means on hover, from dist/index.d.ts', () => {
    const index = path.join(DIST, 'index.js');
    if (!existsSync(path.join(DIST, 'index.d.ts'))) throw new Error('dist/index.d.ts is missing: run npm run build first');
    const from = `import type { FlowInput } from ${JSON.stringify(index)};\n`;
    const probe = (type: string, fields: string[]) => hovers(`${from}declare const probe: ${type};\n${fields.map((f) => `probe.${f};`).join('\n')}\n`, fields);
    const flowFields = Object.keys(flowSchema.shape);
    const flow = probe('FlowInput', flowFields);
    expect(flowFields.filter((f) => !flow[f])).toEqual([]);
    expect(flow.previousValues).toContain('previous version');
    expect(flow.sequenceBy).toContain('processingTime');
    const sourceFields = Object.keys(sourceSchema.shape);
    const source = probe(`NonNullable<FlowInput['source']>`, sourceFields);
    expect(sourceFields.filter((f) => !source[f])).toEqual([]);
    const expectationFields = Object.keys(expectationSchema.shape);
    const expectation = probe(`NonNullable<FlowInput['expect']>[string]`, expectationFields);
    expect(expectationFields.filter((f) => !expectation[f])).toEqual([]);
  }, 60_000);
});
