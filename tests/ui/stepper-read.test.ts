// readSelectionSnapshot(s) on the GPU: a tiny NSA model's forward (B = 2, so batch row 0 must be
// picked out), compared with the activations read whole and indexed here, and with the float64
// model reference: selections exact, scores and gates to f32 rounding (rel RMS ≤ 1e-5).
import { afterAll, describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import { paramSpecs } from '../../src/definitions/params';
import { checkSnapshot, snapshotIssues } from '../../src/definitions/selection-snapshot';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { readSelectionSnapshot, readSelectionSnapshots } from '../../src/model/nsa/snapshot-read';
import { ModelPlan } from '../../src/model/plan';
import { modelForwardRef } from '../../src/reference/model';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { NO_OPTIMIZER, nsaTestModel } from '../helpers/models';

// The model of tests/model/one-step-nsa.test.ts, so that in a full run (one process, shared
// pipeline cache) building this plan compiles nothing new; on SwiftShader compiling dominates.
const cfg: ModelConfig = nsaTestModel(19);
const nsa = cfg.nsa!;
const B = 2;
const T = cfg.seqLen;
const G = cfg.nKvGroups;
const H = cfg.nHeads;
const nb = numSelBlocks(T, nsa);

async function forward() {
  const gpu = await getGpu();
  const plan = await ModelPlan.build(gpu, cfg, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER });
  const params = initParams(paramSpecs(cfg), 7);
  plan.importParams(params);
  const r = rng(77);
  const N = B * T;
  const tokens = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  const targets = Int32Array.from({ length: N }, () => Math.floor(r() * cfg.vocabSize));
  plan.writeBatch(0, tokens, targets, new Int32Array(tokenIndexLength(N)));
  const enc = gpu.device.createCommandEncoder();
  plan.encodeEval(enc);
  gpu.submit([enc.finish()]);
  const ref = modelForwardRef(cfg, new Map([...params].map(([k, v]) => [k, Float64Array.from(v)])), tokens, targets, B);
  return { gpu, plan, tokens, ref };
}

const run = forward();
afterAll(async () => {
  (await run).plan.destroy();
});

describe('readSelectionSnapshots', () => {
  it('every (layer, group) of batch row 0 equals the raw activations and the float64 reference', async () => {
    const { gpu, plan, tokens, ref } = await run;
    const row0 = tokens.subarray(0, T);
    const snaps = await readSelectionSnapshots(gpu, plan, { step: 12, tokens: row0 });
    expect(snaps.map((s) => [s.layer, s.group])).toEqual([
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]);
    const hpg = H / G;
    for (const s of snaps) {
      checkSnapshot(s);
      expect(snapshotIssues(s)).toEqual([]);
      expect([s.step, s.T, s.H, s.G, s.source]).toEqual([12, T, H, G, 'train']);
      expect([...s.tokens]).toEqual([...row0]);
      // Whole tensors [B,T,G,·] / [B,T,H,3], indexed here for b = 0.
      const { sel, scores, gates } = await plan.readSelection(s.layer, B * T);
      const L = ref.layers[s.layer].attnCache;
      const f = L.nsa![0].fwd;
      const refGates = L.nsa![0].inp.gates;
      const want = {
        sel: [] as number[],
        scores: [] as number[],
        gates: [] as number[],
        refScores: [] as number[],
        refGates: [] as number[],
        refSel: [] as number[],
      };
      for (let t = 0; t < T; t++) {
        for (let m = 0; m < nsa.nSel; m++) {
          want.sel.push(sel[(t * G + s.group) * nsa.nSel + m]);
          want.refSel.push(f.selection[(t * G + s.group) * nsa.nSel + m]);
        }
        for (let j = 0; j < nb; j++) {
          want.scores.push(scores[(t * G + s.group) * nb + j]);
          want.refScores.push(f.scores[(t * G + s.group) * nb + j]);
        }
        for (let h = s.group * hpg; h < (s.group + 1) * hpg; h++) {
          for (let c = 0; c < 3; c++) {
            want.gates.push(gates[(t * H + h) * 3 + c]);
            want.refGates.push(refGates[(t * H + h) * 3 + c]);
          }
        }
      }
      expect([...s.sel]).toEqual(want.sel);
      expect([...s.scores!]).toEqual(want.scores);
      expect([...s.gates!]).toEqual(want.gates);
      expect([...s.sel]).toEqual(want.refSel);
      expect(relRms(s.scores!, want.refScores)).toBeLessThanOrEqual(1e-5);
      expect(relRms(s.gates!, want.refGates)).toBeLessThanOrEqual(1e-5);
    }
    // Row 1's scores differ from row 0's, so reading the wrong row could not pass the checks above.
    expect(relRms(snaps[0].scores!, row1Scores(ref))).toBeGreaterThan(1e-3);
  });

  it('readSelectionSnapshot picks one (layer, group)', async () => {
    const { gpu, plan, tokens } = await run;
    const all = await readSelectionSnapshots(gpu, plan, { step: 3, tokens: tokens.subarray(0, T) });
    const one = await readSelectionSnapshot(gpu, plan, { step: 3, layer: 1, group: 1, tokens: tokens.subarray(0, T) });
    expect(one).toEqual(all[3]);
  });

  it('rejects wrong tokens, layers and groups', async () => {
    const { gpu, plan, tokens } = await run;
    await expect(readSelectionSnapshots(gpu, plan, { step: 0, tokens })).rejects.toThrow(/sequence length is 19/);
    await expect(readSelectionSnapshots(gpu, plan, { step: 0, tokens: tokens.subarray(0, T), layers: [2] })).rejects.toThrow(
      /layer 2 outside/,
    );
    await expect(readSelectionSnapshot(gpu, plan, { step: 0, layer: 0, group: 2, tokens: tokens.subarray(0, T) })).rejects.toThrow(
      /group 2 outside/,
    );
  });
});

/** Layer 0, group 0 scores of batch row 1 in the reference (must differ from row 0's). */
function row1Scores(ref: ReturnType<typeof modelForwardRef>): number[] {
  const f = ref.layers[0].attnCache.nsa![1].fwd;
  const out: number[] = [];
  for (let t = 0; t < T; t++) for (let j = 0; j < nb; j++) out.push(f.scores[t * G * nb + j]);
  return out;
}
