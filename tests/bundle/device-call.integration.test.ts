// scripts/gpu/device-call.sh rehearsed on SwiftShader against this checkout (NSA_BUNDLE_APP, no
// packing): with a small BUDGET every step runs under a cap clipped to what is left, a cut step
// keeps what it wrote, summary.json holds every step's status and seconds, and at most eight files
// land in OUT. With the adapter refused (NSA_GPU=hardware on a software adapter), the PyTorch
// figures still come, from the presets' own configs.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { pythonWithTorch } from '../helpers/python';
import { tempFolders } from '../helpers/temp-dir';

const newFolder = tempFolders('nsa-device-call-');

interface Step {
  name: string;
  exit: number | null;
  seconds: number;
  cut?: boolean;
  skipped?: boolean;
}

function deviceCall(budget: number, args: string[]) {
  const out = newFolder('device-call');
  const t0 = performance.now();
  const r = spawnSync('bash', ['scripts/gpu/device-call.sh', ...args], {
    encoding: 'utf8',
    env: { ...process.env, OUT: out, BUDGET: String(budget), NSA_BUNDLE_APP: process.cwd(), NSA_PYTHON: pythonWithTorch().python },
    timeout: (budget + 60) * 1000,
  });
  const seconds = (performance.now() - t0) / 1000;
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { steps: Step[]; torch: unknown };
  return { ...r, out, seconds, summary, log: readFileSync(join(out, 'run.log'), 'utf8') };
}

describe('device-call.sh (SwiftShader rehearsal)', { timeout: 300_000 }, () => {
  // 50 s: the adapter step and run.sh's 10 s reserve leave the smoke step at least run.sh's 5 s only
  // if the adapter takes ≤ 35 s; at 25 s a loaded CI machine once took more, and the step was
  // skipped; at 30 s (2026-11-28, a rehearsal) the adapter took about 15 s and the smoke step's 5 s
  // cap cut Vitest before it printed its first line, so nothing showed that a cut keeps its output;
  // at 40 s (2026-11-28, a rehearsal on a machine slower than usual: 13.9 min for npm test) the
  // smoke step's 10 s cap did the same. At 50 s it gets about 20.
  it('BUDGET=50: the smoke step runs under a cap clipped to the budget; a cut keeps its output; every step in summary.json', () => {
    const budget = 50;
    const r = deviceCall(budget, ['--small', '--allow-software', '--only', 'smoke']);
    expect(r.log).toMatch(new RegExp(`== probe .*budget ${budget} s`));
    expect(r.log).toMatch(/glibc: /);
    const names = r.summary.steps.map((s) => s.name);
    expect(names).toEqual(['adapter', 'smoke']);
    expect(r.summary.steps[0].exit).toBe(0);
    const smoke = r.summary.steps[1];
    expect(smoke.skipped, 'the adapter step left the smoke step no time: nothing was tested').toBeFalsy();
    // On two software cores the kernel smoke needs longer than what 50 s leaves: cut, not failed.
    if (smoke.cut) {
      expect(smoke.exit).toBe(124);
      expect(r.log).toMatch(/== smoke: exit 124 in \d+ s, cut at its \d+ s cap/);
      // What the step printed before the cut stays in run.log (Vitest's verbose lines as they come).
      const smokeLog = r.log.slice(r.log.indexOf('== smoke (cap'), r.log.indexOf('== smoke: exit 124'));
      expect(smokeLog).toMatch(/RUN\s+v\d/);
    } else expect(smoke.exit).toBe(0);
    expect(r.seconds).toBeLessThan(budget + 20); // the budget holds (caps are enforced by timeout)
    expect(readdirSync(r.out).length).toBeLessThanOrEqual(8);
  });

  it('the adapter refused: the GPU steps are skipped, the PyTorch step still runs from the presets', () => {
    const r = deviceCall(120, ['--small', '--only', 'bench,torch']);
    expect(r.status).toBe(1); // no adapter is a failed run
    const steps = Object.fromEntries(r.summary.steps.map((s) => [s.name, s]));
    expect(Object.keys(steps)).toEqual(['adapter', 'torch']);
    expect(steps.adapter.exit).not.toBe(0);
    expect(steps.torch.exit).toBe(0);
    expect(r.log).toMatch(/no usable adapter: the GPU steps are skipped; PyTorch still runs/);
    const torch = JSON.parse(readFileSync(join(r.out, 'torch.json'), 'utf8')) as {
      skipped?: string;
      complete?: boolean;
      results?: Array<{ preset: string; mode: string; tokens_per_s?: number; ours_tokens_per_s: number | null }>;
    };
    if (!pythonWithTorch().hasTorch) {
      expect(torch.skipped).toMatch(/no torch/);
      return;
    }
    expect(torch.complete).toBe(true);
    const eager = torch.results!.find((x) => x.preset === 'tiny' && x.mode === 'eager')!;
    expect(eager.tokens_per_s).toBeGreaterThan(0);
    expect(eager.ours_tokens_per_s).toBeNull(); // no WebGPU figure to compare with
    expect(existsSync(join(r.out, 'bench.jsonl'))).toBe(false);
  });
});
