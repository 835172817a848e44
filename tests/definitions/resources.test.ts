// Resource-aware validation (src/train/resources.ts): the footprint is the plan's own layout, and
// each impossible size of issue 10 is refused before any GPU work with the field to change and the
// largest value that fits; the presets pass, on any adapter and on SwiftShader's limits.
import { describe, expect, it } from 'vitest';

import { countParams } from '../../src/definitions/params';
import { activationEntries } from '../../src/model/activations';
import type { RunConfig } from '../../src/train/config';
import { preset, PRESET_NAMES } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';
import {
  ANY_ADAPTER_LIMITS,
  assertRunResources,
  checkEvalSupply,
  checkRunResources,
  limitsOfAdapter,
  runFootprint,
} from '../../src/train/resources';
import { SWIFTSHADER_LIKE } from './config-fuzz-cases';

function tiny(edit: (c: RunConfig) => void = () => {}): RunConfig {
  const c = preset('tiny');
  edit(c);
  return c;
}

/** A Llama-7B-like shape: 6.5 billion parameters. */
function sixPointFiveBillion(): RunConfig {
  return tiny((c) => {
    Object.assign(c.model, {
      attention: 'dense',
      vocabSize: 32000,
      dim: 4096,
      nLayers: 32,
      nHeads: 32,
      nKvGroups: 8,
      dk: 128,
      dv: 128,
      ffnHidden: 12800,
    });
  });
}

describe('resource checks', () => {
  it('the activation footprint is the layout: gradAccum slots added equal the layout with gradAccum slots', () => {
    for (const attention of ['dense', 'nsa'] as const) {
      const c = tiny((x) => {
        x.model.attention = attention;
        x.train.gradAccum = 3;
      });
      const laid = activationEntries(c.model, { B: 8, T: 64, N: 512, gradAccum: 3, scoredPerSequence: 64 });
      const aligned = laid.reduce((a, e) => a + Math.ceil(Math.max(4, e.bytes) / 256) * 256, 0);
      const f = runFootprint(c);
      // The footprint adds the grad-norm partials (one more entry) to the layout.
      expect(f.activationBytes - aligned).toBeGreaterThan(0);
      expect(f.activationBytes - aligned).toBeLessThanOrEqual(256 * Math.ceil(f.params / 256));
      expect(f.params).toBe(countParams(c.model));
      expect(f.largest.name).toBe('logits');
      expect(f.largest.bytes).toBe(4 * 8 * 64 * 256);
    }
  });

  it('every preset fits any adapter and SwiftShader-like limits', () => {
    for (const name of PRESET_NAMES) {
      for (const attention of ['dense', 'nsa'] as const) {
        const c = preset(name);
        c.model.attention = attention;
        expect(checkRunResources(c), `${name} ${attention}`).toEqual([]);
        expect(checkRunResources(c, SWIFTSHADER_LIKE), `${name} ${attention}`).toEqual([]);
      }
    }
    expect(checkRunResources(recallPreset(), SWIFTSHADER_LIKE)).toEqual([]);
  });

  const fields = (c: RunConfig, limits = ANY_ADAPTER_LIMITS) => [...new Set(checkRunResources(c, limits).map((i) => i.field))];

  it('--batch 1e9: train.batchSize, with the largest batch that fits', () => {
    const issues = checkRunResources(tiny((c) => (c.train.batchSize = 1e9)));
    expect(issues.map((i) => i.field)).toContain('train.batchSize');
    expect(new Set(issues.map((i) => i.field))).toEqual(new Set(['train.batchSize']));
    expect(issues[0].message).toMatch(
      /^1000000000 needs a .* GiB tensor \(logits\); any adapter allows 4\.0 GiB per buffer and binding \(batchSize ≤ 65535 fits\)$/,
    );
  });

  it('batchSize 100000 on a 1 GiB adapter (the page): train.batchSize, GiB and the limit named', () => {
    const limits = limitsOfAdapter({ maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 }, 'SwiftShader');
    const issues = checkRunResources(
      tiny((c) => (c.train.batchSize = 100000)),
      limits,
    );
    expect(issues[0].field).toBe('train.batchSize');
    expect(issues[0].message).toBe(
      '100000 needs a 6.1 GiB tensor (logits); this adapter (SwiftShader) allows 1.0 GiB per buffer and binding (batchSize ≤ 16384 fits)',
    );
    expect(() =>
      assertRunResources(
        tiny((c) => (c.train.batchSize = 100000)),
        limits,
      ),
    ).toThrow(/train\.batchSize: 100000 needs/);
  });

  it('model.vocabSize=1e6: model.vocabSize on a 1 GiB adapter', () => {
    expect(
      fields(
        tiny((c) => (c.model.vocabSize = 1e6)),
        SWIFTSHADER_LIKE,
      ),
    ).toEqual(['model.vocabSize']);
  });

  it('a 6.5-billion-parameter model: refused for GPU memory and the checkpoint, naming a model field', () => {
    const c = sixPointFiveBillion();
    expect(countParams(c.model)).toBeGreaterThan(6.4e9);
    expect(countParams(c.model)).toBeLessThan(6.7e9);
    const issues = checkRunResources(c);
    expect(issues.length).toBeGreaterThanOrEqual(2);
    for (const i of issues) expect(i.field).toMatch(/^model\.(ffnHidden|dim|nLayers)$/);
    expect(issues.map((i) => i.message).join('\n')).toMatch(/6\d{3}\.\d M parameters/);
  });

  it('train.gradAccum=1e6: train.gradAccum (prebuilt dispatches)', () => {
    const issues = checkRunResources(tiny((c) => (c.train.gradAccum = 1e6)));
    expect(issues.map((i) => i.field)).toEqual(['train.gradAccum']);
    expect(issues[0].message).toMatch(/prebuilt dispatches.*gradAccum ≤ \d+ fits/);
  });

  it('train.evalBatches=1e9: train.evalBatches (host memory), and bounded by the validation windows of the data', () => {
    expect(fields(tiny((c) => (c.train.evalBatches = 1e9)))).toEqual(['train.evalBatches']);
    const c = tiny((x) => (x.train.evalBatches = 1000));
    const supply = checkEvalSupply(c, { name: 'brown', valTokens: 4064 });
    expect(supply).toEqual([
      {
        field: 'train.evalBatches',
        message: "1000 batches of 8 need 8000 validation windows; brown's validation split has 4000 (evalBatches ≤ 500 fits)",
      },
    ]);
    expect(
      checkEvalSupply(
        tiny((x) => (x.train.evalBatches = 500)),
        { name: 'brown', valTokens: 4064 },
      ),
    ).toEqual([]);
    expect(checkEvalSupply(c, { name: 'random', valTokens: Infinity })).toEqual([]);
  });

  it("limitsOfAdapter takes the adapter's buffer limits and falls back where one is missing", () => {
    const l = limitsOfAdapter({ maxBufferSize: 2 ** 28 }, 'x', { memoryBytes: 2 ** 33 });
    expect(l.maxBufferSize).toBe(2 ** 28);
    expect(l.maxStorageBufferBindingSize).toBe(ANY_ADAPTER_LIMITS.maxStorageBufferBindingSize);
    expect(l.hostMemoryBytes).toBe(2 ** 33);
    expect(l.source).toBe('this adapter (x)');
  });
});
