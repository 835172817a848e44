// The offline GPU bundle's scripts, run as processes: the dependency closure (collect-deps.mjs),
// run.sh's argument checks and the PyTorch side (torch_bench.py, on the python3 that has torch).
// The summary, the adapter preference and the FLOP arithmetic are tested in process in
// tests/bundle/gpu-bundle.test.ts.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { preset } from '../../src/train/presets/presets';
import { pythonWithTorch } from '../helpers/python';
import { tempFolders } from '../helpers/temp-dir';

const newFolder = tempFolders('nsa-bundle-');

const tinyDense = (): ModelConfig => ({ ...preset('tiny').model, attention: 'dense' });

describe('collect-deps: the node_modules the bundle carries', () => {
  const collect = (...roots: string[]) => spawnSync(process.execPath, ['scripts/gpu/collect-deps.mjs', ...roots], { encoding: 'utf8' });

  it("vitest's closure holds vite and the installed native rolldown build, not other platforms'", () => {
    const r = collect('vitest');
    expect(r.status).toBe(0);
    const dirs = r.stdout.trim().split('\n');
    expect(dirs).toContain('node_modules/vitest');
    expect(dirs).toContain('node_modules/vite');
    expect(dirs).toContain('node_modules/@rolldown/binding-linux-x64-gnu');
    expect(dirs.some((d) => d.includes('darwin') || d.includes('win32'))).toBe(false);
  });

  it('a root that is not installed is an error naming it', () => {
    const r = collect('no-such-package-here');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/root package 'no-such-package-here' is not installed/);
  });
});

describe('run.sh arguments', () => {
  const run = (...args: string[]) => spawnSync('bash', ['scripts/gpu/run.sh', ...args], { encoding: 'utf8' });

  it('refuses unknown arguments and steps before doing anything', () => {
    const out = newFolder('bundle');
    expect(run(out, '--smal').stderr).toMatch(/unknown argument '--smal'/);
    expect(run(out, '--only', 'tests,benchmark').stderr).toMatch(/--only: unknown step 'benchmark'/);
    expect(run().status).toBe(2);
  });

  it('says how to make the bundle when run without its payload', () => {
    const r = run(newFolder('bundle'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no payload\.tar\.xz beside run\.sh: make the bundle with scripts\/gpu\/pack\.sh/);
  });
});

describe('torch_bench.py (the PyTorch side)', () => {
  it("times bench.jsonl's models with the same config and batch: dense eager/SDPA, and python/nsa_playground for dense and NSA", () => {
    const dir = newFolder('torch-bench');
    const model = { ...tinyDense(), seqLen: 16, nLayers: 1 };
    const line = (attention: string) =>
      JSON.stringify({
        kind: 'preset',
        preset: 'tiny',
        attention,
        model: { ...model, attention },
        batch_size: 2,
        grad_accum: 1,
        tokens_per_s: 1000,
      });
    writeFileSync(join(dir, 'bench.jsonl'), `${line('dense')}\n${line('nsa')}\n`);
    const out = join(dir, 'torch.json');
    const { python, hasTorch } = pythonWithTorch();
    const r = spawnSync(
      python,
      ['scripts/gpu/torch_bench.py', '--bench', join(dir, 'bench.jsonl'), '--out', out, '--steps', '1', '--allow-cpu'],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as {
      skipped?: string;
      results?: Array<{ mode: string | null; tokens_per_s?: number; skipped?: string; ours_over_torch?: number }>;
    };
    if (!hasTorch) {
      expect(result.skipped).toMatch(/no torch/);
      return;
    }
    const rows = result.results!;
    expect(rows.map((x) => x.mode)).toEqual(['eager', 'sdpa', 'nsa_playground', 'nsa_playground']);
    // torch 1.13 (Debian's) has no scaled_dot_product_attention: that row says so instead.
    const timed = rows.filter((row) => !(row.mode === 'sdpa' && /no scaled_dot_product_attention/.test(row.skipped ?? '')));
    expect(timed.length).toBeGreaterThanOrEqual(3); // eager, and the repository's model dense and NSA
    for (const row of timed) {
      expect(row.tokens_per_s).toBeGreaterThan(0);
      expect(row.ours_over_torch).toBeCloseTo(1000 / row.tokens_per_s!, 6);
    }
  });
});
