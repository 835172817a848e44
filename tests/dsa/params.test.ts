// DSA's indexer parameters and phases (docs/dsa-spec.md sections 5, 6): names, shapes, export names,
// the warm-up updating only indexer parameters, the phase of each step.
import { describe, expect, it } from 'vitest';

import { validateModelDsaConfig } from '../../src/definitions/dsa-config';
import { dsaPhaseAt, dsaUpdates, indexerExportNames, indexerParamSpecs, isIndexerParam } from '../../src/definitions/dsa-params';

const cfg = { indexHeads: 3, indexDim: 4, topK: 8, warmupSteps: 2, lossWeight: 1 };

describe('DSA indexer parameters and phases', () => {
  it('names, shapes [in, out], decay, export names', () => {
    expect(indexerParamSpecs(1, 16, cfg, 0.02).map((p) => [p.name, p.shape, p.decay])).toEqual([
      ['l1.index_wq', [16, 12], true],
      ['l1.index_wk', [16, 4], true],
      ['l1.index_ww', [16, 3], true],
    ]);
    expect(indexerExportNames(0).wwI).toBe('model.layers.0.self_attn.indexer.weights_proj.weight');
  });

  it('the warm-up updates only indexer parameters; the phase follows warmupSteps', () => {
    expect([0, 1, 2, 3].map((s) => dsaPhaseAt(s, cfg))).toEqual(['warmup', 'warmup', 'sparse', 'sparse']);
    expect(dsaPhaseAt(0, { warmupSteps: 0 })).toBe('sparse');
    expect(isIndexerParam('l12.index_ww')).toBe(true);
    for (const n of ['l0.wq', 'wte', 'final_norm', 'l0.index_wq.x', 'index_wq']) expect(isIndexerParam(n), n).toBe(false);
    expect(dsaUpdates('l0.wq', 1, cfg)).toBe(false);
    expect(dsaUpdates('l0.index_wk', 1, cfg)).toBe(true);
    expect(dsaUpdates('l0.wq', 2, cfg)).toBe(true);
    expect(() => dsaPhaseAt(-1, cfg)).toThrow(RangeError);
  });
});

describe('model.dsa validation', () => {
  const model = { nHeads: 4, nKvGroups: 2, dk: 8, dv: 8 };
  it('names model.dsa.<field>; a missing block names model.dsa', () => {
    expect(validateModelDsaConfig(undefined, model).map((i) => i.field)).toEqual(['model.dsa']);
    expect(validateModelDsaConfig({ ...cfg, indexDim: 16 }, model).map((i) => i.field)).toEqual(['model.dsa.indexDim']);
    expect(validateModelDsaConfig({ ...cfg, topK: 0, indexHeads: 0 }, model).map((i) => i.field)).toEqual([
      'model.dsa.topK',
      'model.dsa.indexHeads',
    ]);
    expect(validateModelDsaConfig(cfg, model)).toEqual([]);
  });
});
