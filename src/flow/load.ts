import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ScdError } from '../errors.js';
import type { Flow } from './flow.js';
import type { FlowInput } from './schema.js';
import { validateFlow } from './validate.js';

/** Read a flow file (JSON or YAML); relative paths inside it resolve against its folder (SEMANTICS §7). */
export function loadFlowFile(file: string): Flow {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch {
    throw new ScdError('FLOW_NOT_FOUND', `cannot read flow file ${file}`, { fix: 'check the path; a flow is a .yaml or .json file' });
  }
  let raw: unknown;
  try {
    raw = abs.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new ScdError('FLOW_INVALID', `not valid ${abs.endsWith('.json') ? 'JSON' : 'YAML'}: ${why}`, {
      file,
      fix: 'correct the syntax at the position shown',
    });
  }
  return validateFlow(raw, file, path.dirname(abs));
}

/**
 * A typed flow for TypeScript users. Relative paths resolve against `baseDir`
 * (default: the current directory).
 */
export function defineFlow(input: FlowInput, options: { baseDir?: string } = {}): Flow {
  return validateFlow(input, 'defineFlow', path.resolve(options.baseDir ?? '.'));
}
