// `model.attention: 'dsa'` at the float64 level (docs/dsa-spec.md sections 5, 8 and 11): the model
// config refuses a bad or missing model.dsa naming the field, before any GPU work (ModelPlan.build
// throws without touching the device); the indexers' parameters join the model's list with their
// export names; and the whole-model twin — the warm-up's main attention is dense (its loss equals
// the dense model's with the same weights, ≤ 1e-12) and only the indexers get gradients; the
// sparse phase's every gradient matches central finite differences (rel RMS ≤ 1e-6; the main
// parameters against the cross-entropy, the indexers' against Σ L_I, the selection frozen).
import { describe, expect, it } from 'vitest';

import { InvalidConfigError } from '../../src/definitions/config-issue';
import type { DsaConfig, DsaPhase } from '../../src/definitions/dsa-config';
import { indexerExportNames, indexerParamNames, isIndexerParam } from '../../src/definitions/dsa-params';
import { type ModelConfig, validateModelConfig } from '../../src/definitions/model-config';
import { attentionForwardFlops, indexerForwardFlops, keysPerQuery } from '../../src/definitions/model-flops';
import { countParams, paramSpecs } from '../../src/definitions/params';
import type { GpuContext } from '../../src/gpu/context';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { ModelDecoder } from '../../src/reference/decoder';
import { modelBackwardRef, modelForwardRef } from '../../src/reference/model';
import { decodeCheckpoint, encodeCheckpoint, type TrainingCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { CONFIG_FILE, MODEL_FILE, OPTIMIZER_FILE } from '../../src/train/export/config-json';
import { exportDirectoryFiles, importDirectoryFiles } from '../../src/train/export/directory';
import { exportedTensors } from '../../src/train/export/hf-names';
import { preset } from '../../src/train/presets/presets';
import { rng } from '../helpers/compare';
import { expectGradient } from '../helpers/finite-diff';
import { denseTestModel, NO_OPTIMIZER } from '../helpers/models';

const DSA: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 4, warmupSteps: 3, lossWeight: 0.7 };

describe('model.dsa validation names the field', () => {
  const base = denseTestModel(12);
  const fields = (dsa: unknown) => validateModelConfig({ ...base, attention: 'dsa', dsa: dsa as DsaConfig }).map((e) => e.field);
  it.each([
    [DSA, []],
    [undefined, ['model.dsa']],
    [{ ...DSA, topK: 0 }, ['model.dsa.topK']],
    [{ ...DSA, topK: 40 }, []],
    [{ ...DSA, indexHeads: 1.5 }, ['model.dsa.indexHeads']],
    [{ ...DSA, indexDim: 3 }, ['model.dsa.indexDim']],
    [{ ...DSA, indexDim: 8 }, ['model.dsa.indexDim']],
    [{ ...DSA, warmupSteps: -1 }, ['model.dsa.warmupSteps']],
    [{ ...DSA, lossWeight: 0 }, ['model.dsa.lossWeight']],
    [{ ...DSA, topK: -2, lossWeight: Number.NaN }, ['model.dsa.topK', 'model.dsa.lossWeight']],
  ])('%j → %j', (dsa, want) => {
    expect(fields(dsa)).toEqual(want);
  });
  it('indexDim wider than dk is refused with the reason', () => {
    const e = validateModelConfig({ ...base, attention: 'dsa', dsa: { ...DSA, indexDim: 8 } });
    expect(e[0].message).toBe('indexDim (8) must be ≤ dk (6): the indexer may be no wider than a head');
  });
  it('ModelPlan.build refuses before any GPU work', async () => {
    const noGpu = new Proxy({}, { get: () => expect.unreachable('the GPU was touched') }) as unknown as GpuContext;
    const bad: ModelConfig = { ...base, attention: 'dsa', dsa: { ...DSA, indexDim: 5 } };
    const err = await ModelPlan.build(noGpu, bad, { batchSize: 1, gradAccum: 1, optimizer: NO_OPTIMIZER }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidConfigError);
    expect((err as InvalidConfigError).issues.map((i) => i.field)).toEqual(['model.dsa.indexDim']);
  });
});

describe('the indexers in the parameter list and the export', () => {
  const c = denseTestModel(12, { attention: 'dsa', dsa: DSA });
  it('per layer WqI [C, H_I·d_I], WkI [C, d_I], WwI [C, H_I], decayed, nn.Linear-transposed under self_attn.indexer', () => {
    const specs = paramSpecs(c);
    const dense = paramSpecs(denseTestModel(12));
    expect(specs.filter((s) => !isIndexerParam(s.name))).toEqual(dense);
    expect(countParams(c) - countParams(denseTestModel(12))).toBe(c.nLayers * c.dim * (2 * 4 + 4 + 2));
    const ex = new Map(exportedTensors(c).map((t) => [t.ours, t]));
    for (let l = 0; l < c.nLayers; l++) {
      const n = indexerParamNames(l);
      const hf = indexerExportNames(l);
      for (const [k, shape] of [
        ['wqI', [c.dim, 8]],
        ['wkI', [c.dim, 4]],
        ['wwI', [c.dim, 2]],
      ] as const) {
        expect(specs.find((s) => s.name === n[k])).toMatchObject({ shape, decay: true, init: { kind: 'normal', std: c.initStd } });
        expect(ex.get(n[k])).toMatchObject({ hf: hf[k], transpose: true, hfShape: [shape[1], shape[0]] });
      }
    }
  });
});

describe('the FLOP model counts DSA’s selected keys and its indexer', () => {
  it('keys per query min(k, t + 1); indexer Σ_t (t + 1)·H_I·(2·d_I + 2) per layer, counted query by query', () => {
    const c = denseTestModel(12, { attention: 'dsa', dsa: DSA });
    expect(Array.from({ length: 12 }, (_, t) => keysPerQuery(c, t))).toEqual([1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4]);
    let indexer = 0;
    for (let t = 0; t < 12; t++) for (let s = 0; s <= t; s++) indexer += DSA.indexHeads * (2 * DSA.indexDim + 2);
    expect(indexerForwardFlops(c)).toBe(indexer * c.nLayers);
    expect(indexerForwardFlops(denseTestModel(12))).toBe(0);
    const keys = [1, 2, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4].reduce((a, b) => a + b, 0);
    expect(attentionForwardFlops(c)).toBe(keys * c.nHeads * c.nLayers * (2 * c.dk + 2 * c.dv) + indexer * c.nLayers);
  });
});

describe('a DSA run: checkpoint and exported directory round trips; the float64 decoder decodes it', () => {
  const config = preset('tiny');
  config.model = { ...config.model, attention: 'dsa', dsa: { ...DSA, indexDim: 8 } };
  const r = rng(3);
  const group = () =>
    new Map(
      paramSpecs(config.model).map((s) => [s.name, Float32Array.from({ length: s.shape.reduce((a, b) => a * b, 1) }, () => r() - 0.5)]),
    );
  const ck: TrainingCheckpoint = {
    config,
    state: { stepsDone: 2, batchesDrawn: 2 },
    params: group(),
    adamM: group(),
    adamV: group(),
    // The step rows' indexer loss (StepMetrics.indexLoss) beside the cross-entropy; a row without one stays without.
    metrics: [
      { step: 0, loss: 3.5, lr: 1e-3, gradNorm: 0.5, tokensPerSecond: 100, stepMs: 10, elapsedMs: 10, indexLoss: 0.375 },
      { step: 1, loss: 3.25, lr: 1e-3, gradNorm: 0.5, tokensPerSecond: 100, stepMs: 10, elapsedMs: 20, indexLoss: Number.NaN },
      { step: 2, loss: 3, lr: 1e-3, gradNorm: 0.5, tokensPerSecond: 100, stepMs: 10, elapsedMs: 30 },
    ],
    evals: [],
    reason: 'interval',
    savedAt: '2026-11-27T00:00:00.000Z',
  };
  const bits = (a: Float32Array) => [...new Uint32Array(a.buffer, a.byteOffset, a.length)];
  const same = (got: TrainingCheckpoint) => {
    expect(got.config.model).toEqual(config.model);
    for (const which of ['params', 'adamM', 'adamV'] as const) {
      expect([...got[which].keys()].sort()).toEqual([...ck[which].keys()].sort());
      for (const [k, v] of ck[which]) expect(bits(got[which].get(k)!), `${which} ${k}`).toEqual(bits(v));
    }
  };
  it('the checkpoint keeps model.dsa, the indexers bit for bit and each step’s indexer loss', () => {
    expect(validateModelConfig(config.model)).toEqual([]);
    expect([...ck.params.keys()].filter(isIndexerParam)).toHaveLength(3 * config.model.nLayers);
    const back = decodeCheckpoint(encodeCheckpoint(ck), { file: 'x' });
    same(back);
    expect(back.metrics).toEqual(ck.metrics);
    expect('indexLoss' in back.metrics[2]).toBe(false);
  });
  it('the exported directory (config.json dsa, indexer weights transposed) comes back bit for bit', () => {
    const files = new Map(exportDirectoryFiles(ck).map((f) => [f.name, f.bytes]));
    const cfg = JSON.parse(new TextDecoder().decode(files.get(CONFIG_FILE))) as Record<string, unknown>;
    expect(cfg.attention).toBe('dsa');
    expect(cfg.dsa).toEqual(config.model.dsa);
    same(
      importDirectoryFiles({
        dir: 'd',
        config: files.get(CONFIG_FILE)!,
        model: files.get(MODEL_FILE)!,
        optimizer: files.get(OPTIMIZER_FILE)!,
      }),
    );
  });
  it('the float64 decoder decodes the checkpoint: top-k tokens per group, keys read per docs/dsa-spec.md section 7', () => {
    // Decode = prefill itself is tests/decode/decode-prefill.test.ts (float64) and tests/decode/gpu-decode.test.ts (GPU).
    const dec = new ModelDecoder(config.model, ck.params);
    const { topK } = config.model.dsa!;
    const G = config.model.nKvGroups;
    for (let t = 0; t < 6; t++) {
      const st = dec.step((7 * t + 3) % config.model.vocabSize);
      expect(st.logits.every(Number.isFinite)).toBe(true);
      for (const L of st.nsa) {
        const row = Array.from(L.selection.subarray(0, topK));
        expect(row.filter((s) => s >= 0)).toHaveLength(Math.min(topK, t + 1));
        for (let g = 1; g < G; g++) expect(Array.from(L.selection.subarray(g * topK, (g + 1) * topK))).toEqual(row);
        expect(L.reads.map((r) => r.sel)).toEqual(new Array<number>(G).fill(Math.min(topK, t + 1)));
        expect(L.indexKeysRead).toBe(t + 1);
      }
    }
  });
});

describe('whole-model twin with DSA', () => {
  const B = 2;
  const c = denseTestModel(9, { attention: 'dsa', dsa: DSA, nLayers: 2, dim: 8, vocabSize: 11, ffnHidden: 6 });
  const params = new Map([...initParams(paramSpecs(c), 5)].map(([k, v]) => [k, Float64Array.from(v)]));
  const r = rng(6);
  const N = B * c.seqLen;
  const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * c.vocabSize));
  const targets = Int32Array.from({ length: N }, () => Math.floor(r() * c.vocabSize));
  const sampled = (n: number) => Array.from({ length: Math.min(n, 16) }, (_, i) => Math.floor((i * n) / Math.min(n, 16)));

  it('warm-up: dense main attention (loss = the dense model’s ≤ 1e-12), L_I > 0, only the indexers get gradients (vs FD of Σ L_I ≤ 1e-6)', () => {
    const phase: DsaPhase = 'warmup';
    const fwd = modelForwardRef(c, params, tokens, targets, B, { dsaPhase: phase });
    const dense = modelForwardRef({ ...c, attention: 'dense', dsa: undefined }, params, tokens, targets, B);
    expect(Math.abs(fwd.loss - dense.loss) / dense.loss).toBeLessThanOrEqual(1e-12);
    expect(fwd.dsa?.phase).toBe('warmup');
    expect(fwd.dsa!.indexLoss).toBeGreaterThan(0);
    const grads = modelBackwardRef(c, params, tokens, targets, B, fwd);
    const indexLoss = () => modelForwardRef(c, params, tokens, targets, B, { dsaPhase: phase }).dsa!.indexLoss;
    for (const spec of paramSpecs(c)) {
      const g = grads.get(spec.name)!;
      if (!isIndexerParam(spec.name)) {
        expect(
          g.every((x) => x === 0),
          `${spec.name} is frozen in the warm-up`,
        ).toBe(true);
        continue;
      }
      const p = params.get(spec.name)!;
      expectGradient(spec.name, g, indexLoss, p, { tol: 1e-6, indices: sampled(p.length), minNorm: 1e-8 });
    }
  });

  it('sparse: main gradients vs FD of the cross-entropy, indexer gradients vs FD of Σ L_I (selection frozen, ≤ 1e-6)', () => {
    const fwd = modelForwardRef(c, params, tokens, targets, B, { dsaPhase: 'sparse' });
    const selections = fwd.layers.map((L) => Int32Array.from(L.attnCache.dsa!.seqs.flatMap((s) => [...s.sel])));
    // Query 8 takes 4 of its 9 candidates: the selection is sparse, and −1 pads the early rows.
    expect(selections[0].some((s) => s === -1) && selections[0].some((s) => s >= 4)).toBe(true);
    const grads = modelBackwardRef(c, params, tokens, targets, B, fwd);
    const run = () => modelForwardRef(c, params, tokens, targets, B, { dsaPhase: 'sparse', selections });
    for (const spec of paramSpecs(c)) {
      const p = params.get(spec.name)!;
      const f = isIndexerParam(spec.name) ? () => run().dsa!.indexLoss : () => run().loss;
      expectGradient(spec.name, grads.get(spec.name)!, f, p, { tol: 1e-6, indices: sampled(p.length) });
    }
  });

  it('sparse with topK ≥ T is the dense model', () => {
    const all = { ...c, dsa: { ...DSA, topK: c.seqLen } };
    const fwd = modelForwardRef(all, params, tokens, targets, B, { dsaPhase: 'sparse' });
    const dense = modelForwardRef({ ...c, attention: 'dense', dsa: undefined }, params, tokens, targets, B);
    expect(Math.abs(fwd.loss - dense.loss) / dense.loss).toBeLessThanOrEqual(1e-12);
  });
});
