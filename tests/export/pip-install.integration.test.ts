// `pip install ./python` beside Debian's python3-torch installs the package and nothing else: Debian's
// torch reports 1.13.0a0+gitunknown, a pre-release that "torch>=1.13" excluded (pip then reached for a
// torch 2.x); pyproject's torch>=1.13.0a0 admits it. A venv seeing the system's packages
// (--system-site-packages, as README's command), offline (--no-index: nothing could be fetched), then
// the package imported from outside the repository with Debian's torch.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const PIP = resolve(ROOT, '.venv-lint/bin/pip');
const root = mkdtempSync(join(tmpdir(), 'nsa-pip-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd = root): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
  expect(r.status, `${cmd} ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('pip install ./python beside Debian torch', () => {
  it('installs nsa-playground only, and it imports with torch 1.13', () => {
    const venv = join(root, 'venv');
    run('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
    const python = join(venv, 'bin/python');
    const report = join(root, 'report.json');
    // .venv-lint's pip installs into the venv (--python); --no-build-isolation: Debian's setuptools builds it.
    run(PIP, ['--python', python, 'install', '--no-index', '--no-build-isolation', '--report', report, resolve(ROOT, 'python')]);
    const installed = (JSON.parse(readFileSync(report, 'utf8')) as { install: Array<{ metadata: { name: string } }> }).install;
    expect(installed.map((i) => i.metadata.name)).toEqual(['nsa-playground']);
    const out = run(python, ['-c', 'import nsa_playground, torch; print(torch.__version__); print(nsa_playground.__file__)']);
    const [version, file] = out.trim().split('\n');
    expect(version).toMatch(/^1\.13\.0a0/);
    expect(file.startsWith(venv)).toBe(true);
  }, 120_000);
});
