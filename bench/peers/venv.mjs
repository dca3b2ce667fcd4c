// The peers' Python: a virtual environment of the bench's own (bench/data/peers/venv, git-ignored),
// with dbt-duckdb and SQLMesh installed by pip at the versions below. Never used by `npm test`.
//
// Versions are pinned so that two runs measure the same tools. dbt-core is held below 1.12: 1.12
// depends on a parser package whose build downloads a wheel from a release page outside the package
// index, which this machine cannot reach (docs/decisions/0067-peers-in-the-bench.md).

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PEER_PACKAGES = ['dbt-core==1.11.16', 'dbt-duckdb==1.11.1', 'sqlmesh==0.236.4'];

/**
 * The venv's folder and its `bin/`, created and filled if missing or installed with other versions.
 * @param {(line: string) => void} [log]
 */
export function ensurePeersVenv(dataDir, log = () => {}) {
  const dir = path.join(dataDir, 'peers', 'venv');
  const bin = path.join(dir, 'bin');
  const stamp = path.join(dir, 'bench-packages.json');
  const wanted = JSON.stringify(PEER_PACKAGES);
  if (existsSync(path.join(bin, 'dbt')) && existsSync(path.join(bin, 'sqlmesh')) && existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) {
    return { dir, bin, versions: versions(bin) };
  }
  const python = process.env.BENCH_PYTHON ?? 'python3.11';
  log(`peers: creating ${path.relative(process.cwd(), dir)} (${python} -m venv; pip install ${PEER_PACKAGES.join(' ')}) ...`);
  const sh = (cmd, args) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0)
      throw new Error(`peers: ${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${(r.stderr || r.stdout || '').split('\n').slice(-15).join('\n')}`);
  };
  if (!existsSync(path.join(bin, 'python'))) sh(python, ['-m', 'venv', dir]);
  sh(path.join(bin, 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...PEER_PACKAGES]);
  writeFileSync(stamp, wanted);
  return { dir, bin, versions: versions(bin) };
}

/** The installed versions of the tools and of the DuckDB library they run on. */
function versions(bin) {
  const r = spawnSync(
    path.join(bin, 'python'),
    ['-c', 'import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in ["dbt-core", "dbt-duckdb", "sqlmesh", "duckdb"]}))'],
    { encoding: 'utf8' },
  );
  try {
    return JSON.parse(r.stdout);
  } catch {
    return {};
  }
}
