/**
 * Every flow field explains itself in an editor: hovering a field of what defineFlow takes
 * (FlowInput, inferred from the zod schema) shows its JSDoc. Asked of TypeScript's language
 * service, as an editor asks it, for every field of the schema and of `source`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { flowSchema, sourceSchema } from '../../src/flow/schema.js';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** The hover text of each `probe.<field>` access in `code`. */
function hovers(code: string, fields: string[]): Record<string, string> {
  const dir = mkdtempSync(path.join(tmpdir(), 'scdkit-jsdoc-'));
  try {
    const file = path.join(dir, 'probe.ts');
    writeFileSync(file, code);
    const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true };
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
  it('every field of a flow and of its source shows what it means on hover', () => {
    const schema = JSON.stringify(path.join(SRC, 'flow', 'schema.ts'));
    const flowFields = Object.keys(flowSchema.shape);
    const sourceFields = Object.keys(sourceSchema.shape);
    const flow = hovers(`import type { FlowInput } from ${schema};\ndeclare const probe: FlowInput;\n${flowFields.map((f) => `probe.${f};`).join('\n')}\n`, flowFields);
    expect(flowFields.filter((f) => !flow[f])).toEqual([]);
    expect(flow.previousValues).toContain('previous version');
    expect(flow.sequenceBy).toContain('processingTime');
    const source = hovers(`import type { SourceSpec } from ${schema};\ndeclare const probe: SourceSpec;\n${sourceFields.map((f) => `probe.${f};`).join('\n')}\n`, sourceFields);
    expect(sourceFields.filter((f) => !source[f])).toEqual([]);
  }, 60_000);
});
