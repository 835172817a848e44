// npm run compare: the settings that differ and each run's final/best metrics, from checkpoints
// written to temp run folders (CPU only); user errors exit through UsageError/CheckpointFormatError.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runCompareCli } from '../../src/cli/compare-cli';
import { isUserError } from '../../src/cli/main';
import { numel, paramSpecs } from '../../src/definitions/params';
import { encodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { compareRuns, settingsOf } from '../../src/train/compare';
import type { RunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { EvalMetrics, StepMetrics } from '../../src/train/types';

const root = mkdtempSync(join(tmpdir(), 'nsa-compare-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const step = (s: number, loss: number, gates?: [number, number, number]): StepMetrics => ({
  step: s,
  loss,
  lr: 1e-3,
  gradNorm: 1,
  tokensPerSecond: 100 * (s + 1),
  stepMs: 1,
  elapsedMs: s,
  ...(gates ? { nsa: { gateMean: gates, histogram: [], invalid: 0, perLayer: [] } } : {}),
});

function writeRun(name: string, config: RunConfig, metrics: StepMetrics[], evals: EvalMetrics[]): string {
  const zeros = () => new Map(paramSpecs(config.model).map((s) => [s.name, new Float32Array(numel(s.shape))]));
  const dir = join(root, name);
  mkdirSync(dir);
  const bytes = encodeCheckpoint({
    config,
    state: { stepsDone: metrics.length, batchesDrawn: metrics.length },
    params: zeros(),
    adamM: zeros(),
    adamV: zeros(),
    metrics,
    evals,
    reason: 'final',
    savedAt: '2026-11-23T00:00:00.000Z',
  });
  writeFileSync(join(dir, 'checkpoint.safetensors'), bytes);
  return dir;
}

const dense = preset('tiny');
dense.model.attention = 'dense';
dense.train.steps = 3;
const nsa = structuredClone(dense);
nsa.model.attention = 'nsa';
nsa.model.nsa!.gates = { kind: 'force', branch: 'win' };
const a = writeRun('dense', dense, [step(0, 5), step(1, 4), step(2, 4.5)], [{ step: 3, valLoss: 4.2 }]);
const b = writeRun('nsa', nsa, [step(0, 5), step(1, 3.5, [0.5, 0.25, 0.125]), step(2, 3.75, [0.4, 0.3, 0.2])], [{ step: 3, valLoss: 3.9 }]);

describe('compare', () => {
  it('settings: the gate ablation is one setting; only differing settings are listed', () => {
    expect(settingsOf(nsa).get('model.nsa.gates')).toEqual({ kind: 'force', branch: 'win' });
    const c = compareRuns([
      { name: 'a', config: dense, metrics: [], evals: [] },
      { name: 'b', config: nsa, metrics: [], evals: [] },
    ]);
    expect(c.differences).toEqual([
      { path: 'model.attention', values: ['dense', 'nsa'] },
      { path: 'model.nsa.gates', values: [{ kind: 'none' }, { kind: 'force', branch: 'win' }] },
    ]);
  });

  it('npm run compare prints the differences and the final and best metrics of each run', () => {
    const out: string[] = [];
    expect(runCompareCli([a, b], { out: (l) => out.push(l) })).toBe(0);
    const text = out.join('\n');
    expect(text).toMatch(/settings that differ:/);
    expect(text).toMatch(/model\.attention\s+"dense"\s+"nsa"/);
    expect(text).toMatch(/dense\s+dense\s+3\s+4\.5000\s+4\.0000 @1\s+4\.2000\s+4\.2000 @3\s+250\s+—/);
    expect(text).toMatch(/nsa\s+nsa\s+3\s+3\.7500\s+3\.5000 @1\s+3\.9000\s+3\.9000 @3\s+250\s+0\.400\/0\.300\/0\.200/);
  });

  it('user errors: fewer than two runs, a missing checkpoint, a broken one', () => {
    const io = { out: () => {} };
    const err = (argv: string[]) => {
      try {
        runCompareCli(argv, io);
      } catch (e) {
        return e;
      }
      throw new Error('no error');
    };
    const one = err([a]);
    expect(isUserError(one)).toBe(true);
    expect((one as Error).message).toMatch(/at least two run folders/);
    const missing = err([a, join(root, 'nope')]);
    expect(isUserError(missing)).toBe(true);
    expect((missing as Error).message).toMatch(/cannot read .*nope\/checkpoint\.safetensors/);
    mkdirSync(join(root, 'broken'));
    writeFileSync(join(root, 'broken', 'checkpoint.safetensors'), new Uint8Array(5));
    const broken = err([a, join(root, 'broken')]);
    expect(isUserError(broken)).toBe(true);
    expect((broken as Error).message).toMatch(/broken\/checkpoint\.safetensors/);
  });
});
