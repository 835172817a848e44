// The PyTorch package's own pytest cases (python/tests): config.json and checkpoint validation (67
// malformed config.json files, each exit 2 with one `error: <file>: <field>: <why>` line), the
// loaders (non-finite, missing, misshapen tensors; sizes bounded before allocation), the trainer's
// non-finite stop and a SIGSTOPped torchrun rank. Run with the python that has torch; any failure
// fails this test with pytest's report.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { torchPython } from './torch-side';

const ROOT = resolve(__dirname, '../..');

describe('python/tests (pytest)', () => {
  it('every case passes', () => {
    const python = torchPython();
    const hasPytest = spawnSync(python, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0;
    expect(hasPytest, `${python} has no pytest: install Debian's python3-pytest (node scripts/ensure-test-env.mjs does, as root)`).toBe(
      true,
    );
    const r = spawnSync(python, ['-m', 'pytest', 'python/tests', '-q', '-p', 'no:cacheprovider'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, OMP_NUM_THREADS: '1' },
      timeout: 540_000,
    });
    const report = `${r.stdout}\n${r.stderr}`;
    console.log(report.trim().split('\n').slice(-3).join('\n'));
    expect(r.error, report).toBeUndefined();
    expect(r.status, report).toBe(0);
    expect(report).toMatch(/\d+ passed/);
    expect(report).not.toMatch(/\d+ (failed|error)/);
  }, 600_000);
});
