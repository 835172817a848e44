// npm run bench's flags without the GPU (src/cli/bench-options.ts): presets with an optional batch
// size (name@B), refusals naming --presets, and the device call's own bench arguments
// (scripts/gpu/run.sh) read as the CLI reads them.
import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { benchOptions } from '../../src/cli/bench-options';
import { preset } from '../../src/train/presets/presets';
import { usageError } from '../helpers/usage-error';

describe('npm run bench flags', () => {
  it('defaults: tiny and small at their own batch and attention', () => {
    const o = benchOptions([]);
    expect(o.runs.map((r) => [r.name, r.batchSize, r.configs.map((c) => c.model.attention)])).toEqual([
      ['tiny', preset('tiny').train.batchSize, [preset('tiny').model.attention]],
      ['small', preset('small').train.batchSize, [preset('small').model.attention]],
    ]);
    expect(o).toMatchObject({ sizes: [256, 512, 1024], steps: 10, peakTflops: null });
  });

  it('name@B trains the preset at batch size B, every attention; the preset itself is untouched', () => {
    const o = benchOptions(['--presets', 'm7c-125m,m7c-125m@8', '--attention', 'dense,nsa', '--matmul=']);
    expect(o.sizes).toEqual([]);
    const [own, eight] = o.runs;
    expect([own.name, own.batchSize, eight.name, eight.batchSize]).toEqual(['m7c-125m', 1, 'm7c-125m', 8]);
    expect(eight.configs.map((c) => [c.model.attention, c.train.batchSize])).toEqual([
      ['dense', 8],
      ['nsa', 8],
    ]);
    expect(own.configs.map((c) => c.train.batchSize)).toEqual([1, 1]);
    // Only the batch differs from the preset's run.
    expect({ ...eight.configs[1], train: { ...eight.configs[1].train, batchSize: 1 } }).toEqual(own.configs[1]);
    expect(preset('m7c-125m').train.batchSize).toBe(1);
  });

  it('refusals name --presets and the entry', () => {
    for (const [entry, text] of [
      ['nope', "unknown preset 'nope'"],
      ['tiny@0', 'whole number ≥ 1'],
      ['tiny@2.5', 'whole number ≥ 1'],
      ['tiny@', 'whole number ≥ 1'],
      ['tiny@2@3', 'whole number ≥ 1'],
      ['nope@2', "unknown preset 'nope'"],
    ]) {
      const e = usageError(() => benchOptions(['--presets', entry]));
      expect(e.message).toContain(text);
      expect([e.flag, e.value]).toEqual(['presets', entry]);
    }
    expect(usageError(() => benchOptions(['--presets', 'tiny,tiny'])).message).toContain('names an entry twice');
    // The same preset at two batches is two entries.
    expect(benchOptions(['--presets', 'tiny,tiny@2']).runs.map((r) => r.batchSize)).toEqual([preset('tiny').train.batchSize, 2]);
    expect(usageError(() => benchOptions(['--steps', '0'])).message).toContain('--steps must be ≥ 1');
    expect(usageError(() => benchOptions(['--peak-tflops', '-1'])).message).toContain('--peak-tflops');
  });

  it("the device call's bench arguments (scripts/gpu/run.sh, both forms) are valid flags", () => {
    const script = readFileSync('scripts/gpu/run.sh', 'utf8');
    const lists = [...script.matchAll(/args=\((--presets [^)]*--matmul[^)]*)\)/g)].map((m) => m[1].split(/\s+/));
    expect(lists).toHaveLength(2);
    for (const argv of lists) expect(() => benchOptions(argv)).not.toThrow();
    const full = benchOptions(lists[1]);
    expect(full.runs.map((r) => `${r.name}@${r.batchSize}`)).toEqual(['tiny@8', 'small@8', 'm7c-125m@1', 'm7c-125m@8']);
  });
});
