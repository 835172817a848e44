// GPU decode (src/decode/gpu-decoder.ts) against its float64 twin, the KV-cache decoder of
// src/reference/decoder.ts, fed the same tokens one position at a time, two sequences in lockstep:
// at every position the logits agree to relative RMS ≤ 1e-5 (f32 vs f64), the NSA selections are
// equal, and the key rows each group's kernel counted equal the reference's and the formula
// ncmp(t) + |selected ≤ t| + min(w, t+1) exactly. Cases: dense; φ avg and mlp; shared and
// per-branch K/V; learned, forced and frozen gates; windows that wrap (T > w) and T not a
// multiple of l, d or l′; one group. Then GPU decode = GPU prefill (the training forward's
// per-position losses and selections), and no buffer is created per token after the first.
// Last, the decode selection kernel against the training forward's (shaders/nsa_select.wgsl) on
// the decoder's own q and compressed keys: scores equal bit for bit (≤ SCORE_ULPS on a GPU, below),
// selections equal; the same
// decode is checked against the prefill too, also over a context long enough that the selection
// kernel's lanes wrap (ncmp(t), nb > 64), and once with the decoder forced to the split selection
// kernels GPUs run (nsaKernels 'group'). Then the selection kernels on their own, split
// (decode_select_split.wgsl: dots, softmax, blocks) and serial, against the training kernel on
// random q and kc at chosen positions (before the first compressed block, n ≤ and > the training
// kernel's SR_CH, nb past 64 lanes, hpg 1 and 6, B and G > 1): scores bit for bit (≤ SCORE_ULPS on
// a GPU) and selections
// equal to the training kernel's same function (split: its group variant; serial: its simple one),
// p_cmp bit for bit between the two (on software adapters, where scoreRow and scoreRowSerial agree),
// scores and p_cmp rel RMS ≤ 1e-5 against float64. Then the split path's workgroup top-n
// (nsa_topn_group.wgsl) on scores written through p_cmp (ties, repeated values, NaN, ±∞, nb up to
// 600, nb < and = nSel, forced blocks on and off, B and G > 1): selections equal to the serial scan's
// (nsa_topn.wgsl, run by the training topN on the same scores).
// DSA (docs/dsa-spec.md section 7): k < T, k ≥ T and the recall options; the selected tokens equal
// the float64 decoder's and the prefill's, the main K/V rows each group's attention counted are
// min(k, t + 1) (slot 'sel') and the indexer rows the scores kernel counted are t + 1 per layer and
// sequence.
import { describe, expect, it } from 'vitest';

import { GpuDecoder, READ_SLOTS } from '../../src/decode/gpu-decoder';
import { dsaIndexKeysRead, dsaKeysRead } from '../../src/definitions/dsa-config';
import { mobaReads, windowReads } from '../../src/definitions/mechanisms';
import type { ModelConfig } from '../../src/definitions/model-config';
import { numCmpBlocks, numSelBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { decodeParams, decodeSelectDispatches } from '../../src/kernels/decode';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import type { NsaAttnVariant } from '../../src/kernels/nsa-attention';
import { selectionScoresDispatch, topNSelectionDispatch } from '../../src/kernels/nsa-select';
import { ModelPlan } from '../../src/model/plan';
import { crossEntropyRef } from '../../src/reference/crossentropy';
import { type DecodeStep, ModelDecoder, readsFormula } from '../../src/reference/decoder';
import { dot, softmaxInPlace } from '../../src/reference/nsa/attention';
import { selectionScoresRow } from '../../src/reference/nsa/selection';
import { randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { NO_OPTIMIZER } from '../helpers/models';
import { DENSE, DSA_CASES, MECHANISM_CASES, NSA_CASES, nsaModel, OPTION_CASES, randomParams, randomTokens } from './helpers';

const LOGITS_TOL = 1e-5;

/**
 * The decode selection scores against the training kernel's: bit for bit on software adapters,
 * within SCORE_ULPS on a GPU. The two run the same arithmetic in different kernels, and a GPU
 * compiler may contract a·b + c into an FMA in one and not in the other: the H200 run of 2026-11-28
 * measured 1–2 ulps (selections equal at every position). Selections stay exact everywhere.
 */
const SCORE_ULPS = 4;

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

/** A float32's bits as an integer ordered like the floats (negatives below +0). */
const ordered = (x: number): number => {
  const u = new Uint32Array(Float32Array.of(x).buffer)[0];
  return u >= 0x80000000 ? 0x80000000 - u : u;
};

function expectScores(gpu: GpuContext, got: Float32Array, want: Float32Array, what: string): void {
  if (gpu.adapter.software) {
    expect(bits(got), what).toEqual(bits(want));
    return;
  }
  expect(got.length, what).toBe(want.length);
  const worst = Math.max(0, ...Array.from(got, (g, i) => Math.abs(ordered(g) - ordered(want[i]))));
  expect(worst, `${what}: ${Array.from(got)} vs ${Array.from(want)}`).toBeLessThanOrEqual(SCORE_ULPS);
}
const B = 2;

const CASES: Array<[string, ModelConfig]> = [
  ['dense', { ...DENSE, seqLen: 19 }],
  ...NSA_CASES,
  [
    'avg, shared K/V, l 6, d 3, l′ 9: T = 37 a multiple of none; w = 3',
    nsaModel({ sharedKV: true, w: 3, l: 6, d: 3, lSel: 9 }, { seqLen: 37 }),
  ],
  ['mlp, per-branch K/V (window ring of 4), gates forced to cmp', nsaModel({ phi: 'mlp', w: 4, gates: { kind: 'force', branch: 'cmp' } })],
  ...OPTION_CASES,
];
const DENSE_OPTIONS: [string, ModelConfig] = [
  'dense, attention-only, no positional encoding, conv 3',
  { ...DENSE, seqLen: 19, ffnHidden: 0, posEncoding: 'none', shortConv: 3 },
];
CASES.push(DENSE_OPTIONS, ...MECHANISM_CASES, ...DSA_CASES);

function relRms(got: ArrayLike<number>, want: ArrayLike<number>): number {
  let e = 0;
  let n = 0;
  for (let i = 0; i < want.length; i++) {
    e += (got[i] - want[i]) ** 2;
    n += want[i] ** 2;
  }
  return Math.sqrt(e / Math.max(n, 1e-300));
}

describe('GPU decode = float64 decode at every position (logits rel RMS ≤ 1e-5, selections and counted reads equal)', () => {
  it.each(CASES)('%s', async (_name, c) => {
    const gpu = await getGpu();
    const params = randomParams(c, 21);
    const T = c.seqLen;
    const tokens = [randomTokens(T, c.vocabSize, 5), randomTokens(T, c.vocabSize, 6)];
    const dec = await GpuDecoder.create(gpu, c, { batch: B });
    dec.loadParams(params);
    const refs = tokens.map(() => new ModelDecoder(c, params));
    const nsa = c.attention === 'nsa' ? c.nsa : undefined;
    const G = c.nKvGroups;
    const nSel = c.dsa?.topK ?? nsa?.nSel ?? c.moba?.topK ?? 1;
    let worst = 0;
    let buffersAfterFirst = 0;
    for (let t = 0; t < T; t++) {
      const out = await dec.step([tokens[0][t], tokens[1][t]]);
      if (!out) throw new Error('no output');
      if (t === 0) buffersAfterFirst = gpu.counters.buffersCreated;
      expect(out.t).toBe(t);
      for (let b = 0; b < B; b++) {
        const want: DecodeStep = refs[b].step(tokens[b][t]);
        const got = out.logits.subarray(b * c.vocabSize, (b + 1) * c.vocabSize);
        const e = relRms(got, want.logits);
        worst = Math.max(worst, e);
        expect(e, `b=${b} t=${t}`).toBeLessThanOrEqual(LOGITS_TOL);
        for (let l = 0; l < c.nLayers; l++) {
          if (c.dsa) {
            // Section 7: the indexer rows once per layer and sequence, counted by the scores kernel.
            expect(out.indexReads[l * B + b], `indexer reads l=${l} b=${b} t=${t}`).toBe(dsaIndexKeysRead(t));
            expect(out.indexReads[l * B + b]).toBe(want.nsa[l].indexKeysRead);
          } else expect(out.indexReads[l * B + b]).toBe(0);
          for (let g = 0; g < G; g++) {
            const r = Array.from(out.reads.subarray(((l * B + b) * G + g) * 4, ((l * B + b) * G + g + 1) * 4));
            if (c.dsa) {
              const L = want.nsa[l];
              const row = Array.from(out.selection.subarray(((l * B + b) * G + g) * nSel, ((l * B + b) * G + g + 1) * nSel));
              expect(row, `selection l=${l} b=${b} g=${g} t=${t}`).toEqual(Array.from(L.selection.subarray(g * nSel, (g + 1) * nSel)));
              expect(r, `reads l=${l} b=${b} g=${g} t=${t}`).toEqual([0, dsaKeysRead(t, c.dsa.topK), 0, 0]);
              expect(r[1]).toBe(L.reads[g].sel);
              continue;
            }
            if (c.attention === 'window' || c.attention === 'moba') {
              // Section 15: only the mechanism's branch reads keys; MoBA's selection = the float64 decoder's.
              const L = want.nsa[l];
              const row = Array.from(out.selection.subarray(((l * B + b) * G + g) * nSel, ((l * B + b) * G + g + 1) * nSel));
              expect(row, `selection l=${l} b=${b} g=${g} t=${t}`).toEqual(Array.from(L.selection.subarray(g * nSel, (g + 1) * nSel)));
              const f = c.moba ? [0, mobaReads(t, row, c.moba), 0, 0] : [0, 0, windowReads(t, c.window!), 0];
              expect(r, `reads l=${l} b=${b} g=${g} t=${t}`).toEqual(f);
              expect(r.slice(0, 3)).toEqual([L.reads[g].cmp, L.reads[g].sel, L.reads[g].win]);
              continue;
            }
            if (!nsa) {
              expect(r, `dense reads l=${l} b=${b} t=${t}`).toEqual([0, 0, 0, t + 1]);
              continue;
            }
            const L = want.nsa[l];
            const row = Array.from(out.selection.subarray(((l * B + b) * G + g) * nSel, ((l * B + b) * G + g + 1) * nSel));
            expect(row, `selection l=${l} b=${b} g=${g} t=${t}`).toEqual(Array.from(L.selection.subarray(g * nSel, (g + 1) * nSel)));
            const f = readsFormula(t, row, nsa);
            expect(r.slice(0, 3), `reads l=${l} b=${b} g=${g} t=${t}`).toEqual([L.reads[g].cmp, L.reads[g].sel, L.reads[g].win]);
            expect(r.slice(0, 3)).toEqual([f.cmp, f.sel, f.win]);
          }
        }
      }
    }
    // Every buffer (caches, staging, uniforms) exists after the first token; none per token.
    expect(gpu.counters.buffersCreated).toBe(buffersAfterFirst);
    expect(READ_SLOTS).toEqual(['cmp', 'sel', 'win', 'dense']);
    console.log(`GPU decode vs float64 decode (${_name}): worst logits rel RMS ${worst.toExponential(2)} over ${T} positions × ${B}`);
    dec.destroy();
    expect(gpu.reports).toEqual([]);
  });

  it('reset starts again at position 0 with the same results; bad tokens and a full context are refused', async () => {
    const gpu = await getGpu();
    const c = NSA_CASES[0][1];
    const params = randomParams(c, 3);
    const dec = await GpuDecoder.create(gpu, c, { batch: 1, capacity: 12 });
    dec.loadParams(params);
    const toks = randomTokens(12, c.vocabSize, 8);
    const first: number[][] = [];
    for (const id of toks) first.push(Array.from((await dec.step([id]))!.logits));
    await expect(dec.step([0])).rejects.toThrow(/context full \(12 tokens\)/);
    dec.reset();
    for (const [t, id] of toks.entries()) expect(Array.from((await dec.step([id]))!.logits), `t=${t}`).toEqual(first[t]);
    dec.reset();
    await expect(dec.step([c.vocabSize])).rejects.toThrow(/token 37 \(sequence 0\) outside the vocabulary/);
    await expect(dec.step([1, 2])).rejects.toThrow(/2 tokens for a batch of 1/);
    expect(() => dec.loadParams(new Map())).toThrow(/missing tensor/);
    dec.destroy();
  });
});

/**
 * A long context for the selection kernel's workgroup: at the last positions ncmp(t) = 131 and
 * nb = 66 exceed its 64 lanes, so lanes take several compressed and selection blocks (they wrap);
 * each compressed block (l 2, d 1) overlaps two selection blocks; 7 heads in one group take its
 * four-, two- and one-head score paths, dk = 6 its remainder loop. The shortest such context: a
 * decode step costs about 0.1 s on SwiftShader whatever T (its dispatches' overhead).
 */
const LONG: [string, ModelConfig] = [
  'avg, l 2, d 1, l′ 2, n 4, 7 heads in one group: ncmp(t) and nb past 64 (T = 132)',
  nsaModel({ l: 2, d: 1, lSel: 2, nSel: 4, w: 5 }, { seqLen: 132, nHeads: 7, nKvGroups: 1 }),
];

/** The training forward's per-position losses and (NSA) selections of every layer, B·T rows. */
async function prefill(c: ModelConfig, f32: Map<string, Float32Array>, tokens: number[], targets: number[]) {
  const gpu = await getGpu();
  const N = B * c.seqLen;
  const plan = await ModelPlan.build(gpu, c, { batchSize: B, gradAccum: 1, optimizer: NO_OPTIMIZER });
  plan.importParams(f32);
  plan.writeBatch(0, Int32Array.from(tokens), Int32Array.from(targets), new Int32Array(tokenIndexLength(N)));
  const enc = gpu.device.createCommandEncoder();
  // DSA: the sparse phase's forward (top-k), which is what decoding runs.
  plan.encodeEval(enc, c.dsa ? c.dsa.warmupSteps + 1 : undefined);
  gpu.submit([enc.finish()]);
  const losses = await plan.readLosses();
  const selections: Int32Array[] = [];
  if (c.attention === 'nsa' || c.attention === 'moba' || c.attention === 'dsa')
    for (let l = 0; l < c.nLayers; l++) selections.push((await plan.readSelection(l, N)).sel);
  plan.destroy();
  return { losses, selections };
}

/** Relative error of the decoded position's loss against the prefill's. */
function lossError(c: ModelConfig, logits: Float32Array, b: number, target: number, want: number): number {
  const V = c.vocabSize;
  const loss = crossEntropyRef(Float64Array.from(logits.subarray(b * V, (b + 1) * V)), [target], 1, V).losses[0];
  return Math.abs(loss - want) / Math.abs(want);
}

describe('GPU decode = GPU prefill (the training forward) at every position', () => {
  it.each([CASES[0], CASES[1], CASES[2], DENSE_OPTIONS, ...OPTION_CASES, ...MECHANISM_CASES, ...DSA_CASES])(
    '%s: per-position losses rel ≤ 1e-5, selections equal',
    async (_name, c) => {
      const gpu = await getGpu();
      const T = c.seqLen;
      const N = B * T;
      const params = randomParams(c, 33);
      const f32 = new Map([...params].map(([k, v]) => [k, Float32Array.from(v)]));
      const tokens = randomTokens(N, c.vocabSize, 12);
      const targets = randomTokens(N, c.vocabSize, 13);
      const { losses, selections: prefillSel } = await prefill(c, f32, tokens, targets);
      // NSA and MoBA select blocks (section 15), DSA tokens.
      const nsa = c.attention === 'nsa' ? c.nsa : c.moba ? { nSel: c.moba.topK } : c.dsa ? { nSel: c.dsa.topK } : undefined;

      const dec = await GpuDecoder.create(gpu, c, { batch: B });
      dec.loadParams(f32);
      const G = c.nKvGroups;
      const nSel = nsa?.nSel ?? 1;
      let worst = 0;
      for (let t = 0; t < T; t++) {
        const out = (await dec.step([tokens[t], tokens[T + t]]))!;
        for (let b = 0; b < B; b++) {
          const n = b * T + t;
          const e = lossError(c, out.logits, b, targets[n], losses[n]);
          worst = Math.max(worst, e);
          expect(e, `b=${b} t=${t}: decode vs prefill loss ${losses[n]}`).toBeLessThanOrEqual(1e-5);
          for (let l = 0; nsa && l < c.nLayers; l++) {
            const got = Array.from(out.selection.subarray((l * B + b) * G * nSel, (l * B + b + 1) * G * nSel));
            expect(got, `selection l=${l} b=${b} t=${t}`).toEqual(Array.from(prefillSel[l].subarray(n * G * nSel, (n + 1) * G * nSel)));
          }
        }
      }
      console.log(`GPU decode vs GPU prefill (${_name}): worst per-position loss rel ${worst.toExponential(2)}`);
      dec.destroy();
      expect(gpu.reports).toEqual([]);
    },
  );
});

describe('GPU decode selection = the training kernels (shaders/nsa_select.wgsl) on the same q and kc, bit for bit (≤ 4 ulps on a GPU); decode = prefill', () => {
  // The decoder's selection kernels by adapter (serial here), and once forced to the split ones GPUs run.
  const SPLIT: [string, ModelConfig, NsaAttnVariant] = [`${CASES[1][0]}, split selection kernels (group)`, CASES[1][1], 'group'];
  it.each<[string, ModelConfig, NsaAttnVariant?]>([CASES[1], CASES[3], CASES[4], LONG, SPLIT])(
    '%s: scores and top-n equal at every position; per-position losses rel ≤ 1e-5 and selections equal to the prefill',
    async (_name, c, nsaKernels) => {
      const gpu = await getGpu();
      const nsa = c.nsa!;
      const { nHeads: H, nKvGroups: G, dk } = c;
      const T = c.seqLen;
      const nB = numSelBlocks(T, nsa);
      const params = new Map([...randomParams(c, 41)].map(([k, v]) => [k, Float32Array.from(v)]));
      const tokens = [randomTokens(T, c.vocabSize, 42), randomTokens(T, c.vocabSize, 43)];
      const targets = randomTokens(B * T, c.vocabSize, 44);
      // One decode serves both checks: this one is the longest of the file (T = 132 for LONG).
      const want = await prefill(c, params, [...tokens[0], ...tokens[1]], targets);
      const dec = await GpuDecoder.create(gpu, c, { batch: B, nsaKernels });
      if (nsaKernels === 'group') expect(dec.dispatches.filter((d) => / select dots$/.test(d.label)).length).toBe(c.nLayers);
      dec.loadParams(params);
      const last = c.nLayers - 1;
      // The last layer's rotated q, selection scores and selection of each step, laid out as the
      // training forward's rows [B, T, ·].
      const q = new Float32Array(B * T * H * dk);
      const scores = new Float32Array(B * T * G * nB);
      const sel = new Int32Array(B * T * G * nsa.nSel);
      for (let t = 0; t < T; t++) {
        const out = (await dec.step([tokens[0][t], tokens[1][t]]))!;
        for (let b = 0; b < B; b++) {
          const n = b * T + t;
          expect(lossError(c, out.logits, b, targets[n], want.losses[n]), `b=${b} t=${t}: decode vs prefill loss`).toBeLessThanOrEqual(
            1e-5,
          );
          for (let l = 0; l < c.nLayers; l++) {
            const got = Array.from(out.selection.subarray((l * B + b) * G * nsa.nSel, (l * B + b + 1) * G * nsa.nSel));
            expect(got, `selection l=${l} b=${b} t=${t} vs prefill`).toEqual(
              Array.from(want.selections[l].subarray(n * G * nsa.nSel, (n + 1) * G * nsa.nSel)),
            );
          }
        }
        const [qt, st] = await Promise.all([dec.readWork((w) => w.q), dec.readWork((w) => w.blockScores)]);
        for (let b = 0; b < B; b++) {
          q.set(qt.subarray(b * H * dk, (b + 1) * H * dk), (b * T + t) * H * dk);
          scores.set(st.subarray(b * G * nB, (b + 1) * G * nB), (b * T + t) * G * nB);
          const rows = out.selection.subarray((last * B + b) * G * nsa.nSel, (last * B + b + 1) * G * nsa.nSel);
          sel.set(rows, (b * T + t) * G * nsa.nSel);
        }
      }
      // The compressed cache only grows: at the end it holds every block each step saw.
      const N = numCmpBlocks(T, nsa);
      const kc = (await dec.readWork((w) => w.layers[last].compressed!.k)).subarray(0, B * N * G * dk);
      dec.destroy();

      const arena = createArena(gpu, 'decode-select-vs-train', [
        { name: 'q', bytes: q.byteLength },
        { name: 'kc', bytes: kc.byteLength },
        { name: 'scores', bytes: scores.byteLength },
        { name: 'sel', bytes: sel.byteLength },
      ]);
      const a = (n: string) => arena.get(n);
      gpu.write(a('q'), q);
      gpu.write(a('kc'), kc);
      gpu.run([
        await selectionScoresDispatch(gpu, { q: a('q'), kc: a('kc'), scores: a('scores'), B, T, H, G, dk, cfg: nsa, variant: nsaKernels }),
        await topNSelectionDispatch(gpu, { scores: a('scores'), sel: a('sel'), B, T, G, cfg: nsa }),
      ]);
      const [wantScores, wantSel] = await Promise.all([gpu.readF32(a('scores')), gpu.readI32(a('sel'))]);
      for (const buf of arena.buffers) buf.destroy();

      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) {
          const nb = Math.floor(t / nsa.lSel) + 1;
          for (let g = 0; g < G; g++) {
            const o = ((b * T + t) * G + g) * nB;
            expectScores(gpu, scores.subarray(o, o + nb), wantScores.subarray(o, o + nb), `scores b=${b} t=${t} g=${g}`);
          }
        }
      }
      expect(Array.from(sel)).toEqual(Array.from(wantSel));
      expect(gpu.reports).toEqual([]);
    },
  );
});

interface SelectCase {
  name: string;
  B: number;
  H: number;
  G: number;
  dk: number;
  cfg: NsaConfig;
  /** Positions held (training rows T = cap); the decode positions checked. */
  cap: number;
  ts: number[];
  /** The training kernel's SR_CH (default scoreRowChunk): below n, its recompute path in chunks. */
  chunk?: number;
}

const SEL_BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 4, phi: 'avg', forceInit: true, forceLocal: 1 };
const SELECT_CASES: SelectCase[] = [
  {
    name: 'B 2, G 2, hpg 2; t before the first block (0, 2), at it (3), nb 3 and 8 (not a multiple of l, d or l′)',
    B: 2,
    H: 4,
    G: 2,
    dk: 8,
    cfg: SEL_BASE,
    cap: 61,
    ts: [0, 2, 3, 17, 60],
  },
  {
    name: 'hpg 1, G 3; n up to 328 > SR_CH = 64 (5 training chunks), nb 66 past the 64 lanes; no forced block 0',
    B: 1,
    H: 3,
    G: 3,
    dk: 6,
    cfg: { ...SEL_BASE, l: 3, d: 1, lSel: 5, nSel: 4, forceInit: false, forceLocal: 2 },
    cap: 330,
    ts: [1, 63, 66, 200, 329],
    chunk: 64,
  },
  {
    name: 'G 1, hpg 6, dk 16; n ≤ SR_CH',
    B: 2,
    H: 6,
    G: 1,
    dk: 16,
    cfg: { ...SEL_BASE, l: 8, d: 4, lSel: 8, nSel: 2, forceLocal: 1, forceInit: false },
    cap: 45,
    ts: [6, 7, 30, 44],
  },
];

describe('GPU decode selection, split (dots, softmax, blocks) and serial = the training kernel (nsa_select.wgsl scores, group and simple) bit for bit', () => {
  it.each(SELECT_CASES)(
    '$name: scores bit for bit (≤ 4 ulps on a GPU) and selections equal; p_cmp split = serial bit for bit (software adapters); vs float64 scores and p_cmp rel RMS ≤ 1e-5',
    async ({ B, H, G, dk, cfg, cap, ts, chunk }) => {
      const gpu = await getGpu();
      const T = cap;
      const N = numCmpBlocks(T, cfg);
      const nB = numSelBlocks(T, cfg);
      const r = rng(7 + H * 31 + cap);
      const q = Float32Array.from(randn(B * T * H * dk, r));
      const kc = Float32Array.from(randn(B * N * G * dk, r));
      const hpg = H / G;
      const arena = createArena(gpu, 'decode-select-split', [
        { name: 'q', bytes: q.byteLength },
        { name: 'kc', bytes: kc.byteLength },
        { name: 'st', bytes: 16 },
        { name: 'qRow', bytes: 4 * B * H * dk },
        ...['split', 'serial'].flatMap((v) => [
          { name: `${v}.trainScores`, bytes: 4 * B * T * G * nB },
          { name: `${v}.trainSel`, bytes: 4 * B * T * G * cfg.nSel },
          { name: `${v}.scratch`, bytes: 4 * B * H * cap },
          { name: `${v}.scores`, bytes: 4 * B * G * nB },
          { name: `${v}.sel`, bytes: 4 * B * G * cfg.nSel },
        ]),
      ]);
      const a = (n: string) => arena.get(n);
      gpu.write(a('q'), q);
      gpu.write(a('kc'), kc);
      // Each decode variant against the training kernel running the same function: the split one
      // (scoreRow's arithmetic) against 'group' (scoreRow), the serial one against 'simple'
      // (scoreRowSerial). SwiftShader gives all four the same bits; a GPU compiler may schedule
      // scoreRow and scoreRowSerial an ulp apart (nsa_score_row.wgsl).
      const want: Record<string, { scores: Float32Array; sel: Int32Array }> = {};
      for (const [v, variant] of [
        ['split', 'group'],
        ['serial', 'simple'],
      ] as const) {
        const scores = a(`${v}.trainScores`);
        const sel = a(`${v}.trainSel`);
        gpu.run([
          await selectionScoresDispatch(gpu, { q: a('q'), kc: a('kc'), scores, B, T, H, G, dk, cfg, chunk, variant }),
          await topNSelectionDispatch(gpu, { scores, sel, B, T, G, cfg }),
        ]);
        want[v] = { scores: await gpu.readF32(scores), sel: await gpu.readI32(sel) };
      }
      const P = decodeParams(
        {},
        {
          B,
          H,
          G,
          hpg,
          dk,
          cap,
          Nmax: N,
          nBmax: nB,
          l: cfg.l,
          d: cfg.d,
          lSel: cfg.lSel,
          nSel: cfg.nSel,
          forceInit: cfg.forceInit ? 1 : 0,
          forceLocal: cfg.forceLocal,
          scale: 1 / Math.sqrt(dk),
        },
      );
      const slices = (v: string) => ({
        st: a('st'),
        q: a('qRow'),
        kc: a('kc'),
        scratch: a(`${v}.scratch`),
        scores: a(`${v}.scores`),
        sel: a(`${v}.sel`),
      });
      const split = await decodeSelectDispatches(gpu, P, slices('split'), 'select', 'group');
      const serial = await decodeSelectDispatches(gpu, P, slices('serial'), 'select', 'simple');
      // Dots over ceil(B·H·Nmax / 64) workgroups, a softmax per (b, head), the blocks per (b, g).
      expect(split.map((d) => d.label)).toEqual(['select dots', 'select softmax', 'select blocks']);
      expect(serial.length).toBe(1);
      for (const t of ts) {
        const n = numCmpBlocks(t + 1, cfg);
        const nb = Math.floor(t / cfg.lSel) + 1;
        gpu.write(a('st'), Uint32Array.of(t));
        const qRow = new Float32Array(B * H * dk);
        for (let b = 0; b < B; b++) qRow.set(q.subarray((b * T + t) * H * dk, (b * T + t + 1) * H * dk), b * H * dk);
        gpu.write(a('qRow'), qRow);
        gpu.run([...split, ...serial]);
        const got = Object.fromEntries(
          await Promise.all(
            ['split', 'serial'].map(
              async (v) =>
                [
                  v,
                  {
                    p: await gpu.readF32(a(`${v}.scratch`)),
                    scores: await gpu.readF32(a(`${v}.scores`)),
                    sel: await gpu.readI32(a(`${v}.sel`)),
                  },
                ] as const,
            ),
          ),
        );
        // The float64 twin: p_cmp = softmax(q·kc/√dk) over the n visible blocks, P = Σ_heads Σ_k p·overlap.
        const refP: number[] = [];
        const gotP: number[] = [];
        const gotSerialP: number[] = [];
        const refScores: number[] = [];
        const gotScores: number[] = [];
        for (let b = 0; b < B; b++)
          for (let g = 0; g < G; g++) {
            const o = ((b * T + t) * G + g) * nB;
            const at = `t=${t} b=${b} g=${g}`;
            for (const v of ['split', 'serial']) {
              const s = got[v].scores.subarray((b * G + g) * nB, (b * G + g) * nB + nb);
              expectScores(gpu, s, want[v].scores.subarray(o, o + nb), `${v} scores ${at}`);
              const sl = got[v].sel.subarray((b * G + g) * cfg.nSel, (b * G + g + 1) * cfg.nSel);
              const w = want[v].sel.subarray(((b * T + t) * G + g) * cfg.nSel, ((b * T + t) * G + g + 1) * cfg.nSel);
              expect(Array.from(sl), `${v} selection ${at}`).toEqual(Array.from(w));
            }
            const ps = new Float64Array(nB);
            for (let m = 0; m < hpg; m++) {
              const head = g * hpg + m;
              const row = (b * H + head) * cap;
              if (gpu.adapter.software)
                expect(bits(got.split.p.subarray(row, row + n)), `p_cmp ${at} head ${head}`).toEqual(
                  bits(got.serial.p.subarray(row, row + n)),
                );
              const s = new Float64Array(n);
              for (let k = 0; k < n; k++) s[k] = dot(q, ((b * T + t) * H + head) * dk, kc, ((b * N + k) * G + g) * dk, dk) / Math.sqrt(dk);
              softmaxInPlace(s, n);
              refP.push(...s);
              gotP.push(...got.split.p.subarray(row, row + n));
              gotSerialP.push(...got.serial.p.subarray(row, row + n));
              selectionScoresRow(s, 0, t, cfg, ps, 0);
            }
            refScores.push(...ps.subarray(0, nb));
            gotScores.push(...got.split.scores.subarray((b * G + g) * nB, (b * G + g) * nB + nb));
          }
        expect(relRms(gotP, refP), `split p_cmp vs float64 t=${t}`).toBeLessThanOrEqual(1e-5);
        expect(relRms(gotSerialP, refP), `serial p_cmp vs float64 t=${t}`).toBeLessThanOrEqual(1e-5);
        expect(relRms(gotScores, refScores), `scores vs float64 t=${t}`).toBeLessThanOrEqual(1e-5);
      }
      for (const buf of arena.buffers) buf.destroy();
      expect(gpu.reports).toEqual([]);
    },
  );
});

/**
 * The split path's top-n (selectBlocks' topnSelectGroup, nsa_topn_group.wgsl: its picks an argmax
 * over the workgroup's lanes) on chosen scores. With l = d = l′ and one head a group (or the other
 * heads' p 0), block j's score is fma(p_j, 1, 0) = p_j for every complete block (0 for the partial
 * last one), so p_cmp written straight into the scratch sets the scores exactly and only the blocks
 * dispatch runs. Each (b, g) row takes a pattern (ties everywhere, repeated values, NaN, ±∞, all
 * NaN, distinct), and the selection must equal that of the scan (nsa_topn.wgsl, in the training
 * kernel's topN) on the same scores at row t. −0 cannot reach a score here (the sum starts at +0).
 */
interface TopnCase {
  name: string;
  B: number;
  G: number;
  hpg: number;
  cfg: NsaConfig;
  cap: number;
  ts: number[];
}

const TOPN_CASES: TopnCase[] = [
  {
    name: 'nb up to 600 ≫ 64 lanes, nSel 16 (nb = nSel at t 15), block 0 and 2 local forced (block 0 among the local at t ≤ 1); B 1, G 2',
    B: 1,
    G: 2,
    hpg: 1,
    cfg: { ...SEL_BASE, l: 1, d: 1, lSel: 1, nSel: 16, forceInit: true, forceLocal: 2 },
    cap: 600,
    ts: [0, 1, 15, 63, 64, 130, 599],
  },
  {
    name: 'nothing forced, nSel 5: t in the first block (n 0 and 1), nb 3 < nSel, nb = nSel (last block complete and partial), nb 10; B 2, G 3',
    B: 2,
    G: 3,
    hpg: 1,
    cfg: { ...SEL_BASE, l: 2, d: 2, lSel: 2, nSel: 5, forceInit: false, forceLocal: 0 },
    cap: 20,
    ts: [0, 1, 5, 8, 9, 19],
  },
  {
    name: 'hpg 2, block 0 forced only, nSel 3; B 2, G 1',
    B: 2,
    G: 1,
    hpg: 2,
    cfg: { ...SEL_BASE, l: 4, d: 4, lSel: 4, nSel: 3, forceInit: true, forceLocal: 0 },
    cap: 40,
    ts: [3, 11, 38, 39],
  },
];

/** Score patterns of a row: value of block j (r: the row's random stream). */
const TOPN_PATTERNS: Array<[string, (j: number, r: () => number) => number]> = [
  ['all equal', () => 0.25],
  ['repeated 0, 0.5, 1', (_j, r) => Math.floor(r() * 3) / 2],
  ['ties in runs of 7, rising', (j) => Math.floor(j / 7)],
  ['zeros', () => 0],
  ['NaN every third, ±∞, ties', (j, r) => (j % 3 === 1 ? NaN : j % 5 === 0 ? (r() < 0.5 ? Infinity : -Infinity) : Math.floor(r() * 4))],
  ['all NaN', () => NaN],
  ['distinct random', (_j, r) => r()],
];

describe('GPU decode split top-n (nsa_topn_group.wgsl) = the serial scan (nsa_topn.wgsl in training topN) on chosen scores, ties, NaN and ±∞ included', () => {
  it.each(TOPN_CASES)('$name', async ({ B, G, hpg, cfg, cap, ts }) => {
    const gpu = await getGpu();
    const H = G * hpg;
    const T = cap;
    const N = numCmpBlocks(T, cfg);
    const nB = numSelBlocks(T, cfg);
    const arena = createArena(gpu, 'decode-topn-group', [
      { name: 'st', bytes: 16 },
      { name: 'q', bytes: 4 * B * H },
      { name: 'kc', bytes: 4 * B * N * G },
      { name: 'scratch', bytes: 4 * B * H * cap },
      { name: 'scores', bytes: 4 * B * G * nB },
      { name: 'sel', bytes: 4 * B * G * cfg.nSel },
      { name: 'trainScores', bytes: 4 * B * T * G * nB },
      { name: 'trainSel', bytes: 4 * B * T * G * cfg.nSel },
    ]);
    const a = (n: string) => arena.get(n);
    const P = decodeParams(
      {},
      {
        B,
        H,
        G,
        hpg,
        dk: 1,
        cap,
        Nmax: N,
        nBmax: nB,
        l: cfg.l,
        d: cfg.d,
        lSel: cfg.lSel,
        nSel: cfg.nSel,
        forceInit: cfg.forceInit ? 1 : 0,
        forceLocal: cfg.forceLocal,
        scale: 1,
      },
    );
    const split = await decodeSelectDispatches(
      gpu,
      P,
      { st: a('st'), q: a('q'), kc: a('kc'), scratch: a('scratch'), scores: a('scores'), sel: a('sel') },
      'select',
      'group',
    );
    const blocks = split.filter((d) => d.label === 'select blocks');
    expect(blocks.length).toBe(1);
    const r = rng(11 + cap + G);
    const trainScores = new Float32Array(B * T * G * nB);
    const got = new Map<string, Int32Array>();
    for (const [i, t] of ts.entries()) {
      const n = numCmpBlocks(t + 1, cfg);
      const nb = Math.floor(t / cfg.lSel) + 1;
      const p = new Float32Array(B * H * cap);
      const want = new Float32Array(B * G * nb);
      for (let b = 0; b < B; b++)
        for (let g = 0; g < G; g++) {
          const f = TOPN_PATTERNS[(i + b * G + g) % TOPN_PATTERNS.length][1];
          for (let k = 0; k < n; k++) p[(b * H + g * hpg) * cap + k] = f(k, r);
          want.set(p.subarray((b * H + g * hpg) * cap, (b * H + g * hpg) * cap + nb), (b * G + g) * nb);
          for (let j = n; j < nb; j++) want[(b * G + g) * nb + j] = 0;
        }
      gpu.write(a('st'), Uint32Array.of(t));
      gpu.write(a('scratch'), p);
      gpu.run(blocks);
      const scores = await gpu.readF32(a('scores'));
      got.set(`${t}`, await gpu.readI32(a('sel')));
      for (let b = 0; b < B; b++)
        for (let g = 0; g < G; g++) {
          const row = scores.subarray((b * G + g) * nB, (b * G + g) * nB + nb);
          // The scores are the chosen values (NaN as NaN), so the ties are real.
          expect(Array.from(row), `scores t=${t} b=${b} g=${g}`).toEqual(Array.from(want.subarray((b * G + g) * nb, (b * G + g + 1) * nb)));
          trainScores.set(row, ((b * T + t) * G + g) * nB);
        }
    }
    gpu.write(a('trainScores'), trainScores);
    gpu.run([await topNSelectionDispatch(gpu, { scores: a('trainScores'), sel: a('trainSel'), B, T, G, cfg })]);
    const serial = await gpu.readI32(a('trainSel'));
    for (const [i, t] of ts.entries()) {
      const sel = got.get(`${t}`)!;
      for (let b = 0; b < B; b++)
        for (let g = 0; g < G; g++) {
          const w = serial.subarray(((b * T + t) * G + g) * cfg.nSel, ((b * T + t) * G + g + 1) * cfg.nSel);
          const pattern = TOPN_PATTERNS[(i + b * G + g) % TOPN_PATTERNS.length][0];
          expect(Array.from(sel.subarray((b * G + g) * cfg.nSel, (b * G + g + 1) * cfg.nSel)), `t=${t} b=${b} g=${g} ${pattern}`).toEqual(
            Array.from(w),
          );
        }
    }
    for (const buf of arena.buffers) buf.destroy();
    expect(gpu.reports).toEqual([]);
  });
});
