// readSelectionSnapshot(s) on the GPU: a tiny NSA model's forward (B = 2, so batch row 0 must be
// picked out), compared with the activations read whole and indexed here, and with the float64
// model reference: selections exact, scores and gates to f32 rounding (rel RMS ≤ 1e-5).
import { afterAll, describe, expect, it } from 'vitest';

import { mobaAsNsa } from '../../src/definitions/mechanisms';
import type { ModelConfig } from '../../src/definitions/model-config';
import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import { paramSpecs } from '../../src/definitions/params';
import { checkSnapshot, type SelectionSnapshot, snapshotIssues } from '../../src/definitions/selection-snapshot';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { readSelectionSnapshot, readSelectionSnapshots } from '../../src/model/nsa/snapshot-read';
import { ModelPlan } from '../../src/model/plan';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { modelForwardRef } from '../../src/reference/model';
import { selectionWhy } from '../../src/ui/stepper/why';
import { relRms, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { denseTestModel, NO_OPTIMIZER, nsaTestModel } from '../helpers/models';

// The model of tests/model/one-step-nsa.test.ts, so that in a full run (one process, shared
// pipeline cache) building this plan compiles nothing new; on SwiftShader compiling dominates.
const cfg: ModelConfig = nsaTestModel(19);
const nsa = cfg.nsa!;
const B = 2;
const T = cfg.seqLen;
const G = cfg.nKvGroups;
const H = cfg.nHeads;
const nb = numSelBlocks(T, nsa);

async function forward(cfg: ModelConfig = nsaTestModel(19)) {
  const T = cfg.seqLen;
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
  const ref =
    cfg.attention === 'nsa'
      ? modelForwardRef(cfg, new Map([...params].map(([k, v]) => [k, Float64Array.from(v)])), tokens, targets, B)
      : null;
  return { gpu, plan, tokens, ref: ref! };
}

const run = forward(cfg);
// The models of tests/model/one-step-mechanisms.test.ts (MoBA) and one-step-dsa.test.ts (DSA).
const mobaCfg = denseTestModel(19, { attention: 'moba', moba: { blockSize: 4, topK: 3 } });
const dsaCfg = denseTestModel(11, { attention: 'dsa', dsa: { indexHeads: 2, indexDim: 4, topK: 5, warmupSteps: 1, lossWeight: 0.7 } });
const mobaRun = forward(mobaCfg);
const dsaRun = forward(dsaCfg);
afterAll(async () => {
  for (const r of [run, mobaRun, dsaRun]) (await r).plan.destroy();
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

describe('readSelectionSnapshots of MoBA and DSA models', () => {
  /** Row 0's entries of a raw [B·T, G?, width] tensor for group g (perGroup false: one row per query). */
  const row0 = (raw: ArrayLike<number>, T: number, G: number, g: number, width: number, perGroup: boolean) => {
    const out: number[] = [];
    for (let t = 0; t < T; t++) {
      const r = perGroup ? t * G + g : t;
      for (let m = 0; m < width; m++) out.push(raw[r * width + m]);
    }
    return out;
  };

  it('MoBA: blocks of B with its own block forced, per-group scores; the why ranks follow the scores', async () => {
    const { gpu, plan, tokens } = await mobaRun;
    const T2 = mobaCfg.seqLen;
    const snaps = await readSelectionSnapshots(gpu, plan, { step: 2, tokens: tokens.subarray(0, T2) });
    expect(snaps).toHaveLength(mobaCfg.nLayers * mobaCfg.nKvGroups);
    const nb2 = Math.ceil(T2 / 4);
    for (const s of snaps) {
      checkSnapshot(s);
      expect(snapshotIssues(s)).toEqual([]);
      expect([s.mechanism, s.gates, s.cfg]).toEqual(['moba', undefined, mobaAsNsa({ blockSize: 4, topK: 3 })]);
      const { sel, scores } = await plan.readSelection(s.layer, B * T2);
      expect([...s.sel]).toEqual(row0(sel, T2, mobaCfg.nKvGroups, s.group, 3, true));
      expect([...s.scores!]).toEqual(row0(scores, T2, mobaCfg.nKvGroups, s.group, nb2, true));
      expectRanksFollowScores(s);
    }
    // The groups' scores differ, so a group's row could not stand in for another's.
    expect(relRms(snaps[0].scores!, snaps[1].scores!)).toBeGreaterThan(1e-3);
  });

  it('DSA: tokens, the index scores of each query (the same in every group), the phase of the step', async () => {
    const { gpu, plan, tokens } = await dsaRun;
    const T2 = dsaCfg.seqLen;
    const k = dsaCfg.dsa!.topK;
    const warm = await readSelectionSnapshots(gpu, plan, { step: 0, tokens: tokens.subarray(0, T2) });
    const snaps = await readSelectionSnapshots(gpu, plan, { step: 1, tokens: tokens.subarray(0, T2) });
    expect(warm.map((s) => s.phase)).toEqual(warm.map(() => 'warmup'));
    for (const s of snaps) {
      checkSnapshot(s);
      expect(snapshotIssues(s)).toEqual([]);
      expect([s.mechanism, s.phase, s.gates, s.cfg.lSel, s.cfg.nSel]).toEqual(['dsa', 'sparse', undefined, 1, k]);
      const { sel, scores } = await plan.readSelection(s.layer, B * T2);
      expect([...s.sel]).toEqual(row0(sel, T2, dsaCfg.nKvGroups, s.group, k, true));
      expect([...s.scores!]).toEqual(row0(scores, T2, dsaCfg.nKvGroups, s.group, T2, false));
      // The float64 top-k of the snapshot's own scores picks the snapshot's tokens: scores and tokens line up.
      expect([...s.sel]).toEqual([...selectTokensRef(s.scores!, T2, 1, k)]);
      expectRanksFollowScores(s);
    }
  });
});

/** Every row: the tokens or blocks picked by score hold ranks 1 … slots of the recorded scores. */
function expectRanksFollowScores(s: SelectionSnapshot): void {
  for (let t = 0; t < s.T; t++) {
    const why = selectionWhy(s, t);
    const ranks = why.items.filter((i) => i.reason === 'score').map((i) => i.rank!);
    expect(
      ranks.sort((a, b) => a - b),
      `t = ${t}`,
    ).toEqual(Array.from({ length: why.slots }, (_, i) => i + 1));
  }
}

/** Layer 0, group 0 scores of batch row 1 in the reference (must differ from row 0's). */
function row1Scores(ref: ReturnType<typeof modelForwardRef>): number[] {
  const f = ref.layers[0].attnCache.nsa![1].fwd;
  const out: number[] = [];
  for (let t = 0; t < T; t++) for (let j = 0; j < nb; j++) out.push(f.scores[t * G * nb + j]);
  return out;
}
