/**
 * The package holds what `scd` needs to run, with no build step at a user's `npm install`: the
 * command (bin/scd), the compiled library and web app (dist/, built by `npm run build`, which
 * `npm test` runs first), its pages, and the Spark Connect protocol (proto/). Asked of npm itself,
 * as `npm publish` would pack it.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('npm pack', () => {
  it('packs bin/scd, dist/serve/server.js, every page of dist/serve/pages and proto/', async () => {
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    const files = new Set((JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path));
    expect(files.has('dist/index.js'), 'dist/ is missing: run npm run build first').toBe(true);
    const pages = readdirSync(path.join(ROOT, 'src', 'serve', 'pages'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `dist/serve/pages/${f.replace(/\.ts$/, '.js')}`);
    expect(pages.length).toBeGreaterThanOrEqual(5);
    const protos = readdirSync(path.join(ROOT, 'proto')).map((f) => `proto/${f}`);
    expect(protos).toContain('proto/spark-connect.proto');
    const needed = ['bin/scd', 'package.json', 'dist/index.d.ts', 'dist/serve/server.js', ...pages, ...protos];
    expect(needed.filter((f) => !files.has(f))).toEqual([]);
    // Nothing of the sources' tests or their artifacts.
    expect([...files].filter((f) => /^(test|test-artifacts|node_modules|src)\//.test(f))).toEqual([]);
  }, 120_000);
});
