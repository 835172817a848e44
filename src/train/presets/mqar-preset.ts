// Multi-query associative recall presets (the recall task's mqar layout, Zoology's MQAR): models as
// recall research trains them — attention-only layers, a causal key convolution of 4 taps, RoPE —
// at three sizes. Every preset keeps the answers out of a sliding window's reach: window-only
// attention carries information at most nLayers·(w − 1 + shortConv − 1) positions back (the key
// convolution lets a key see shortConv − 1 earlier tokens), so minDistance is one more, and the pairs
// start at lSel, out of NSA's always-selected block 0: NSA must find them by content.
//
// Figures (docs/benchmarks.md, `npm run learn`):
// - mqar-tiny: the CPU-sized check. PyTorch engine on the 2-core CI machine (2026-11-27): NSA 99.4 %
//   held-out answer accuracy at step 1,600 (3.5 min), dense 99.7 % at step 500 (0.6 min),
//   window-only at chance (1.6 %) over all 3,000 steps. On SwiftShader (WebGPU engine) a step takes
//   about 0.5 s at batch 2, so the CPU check uses PyTorch; on a GPU a mqar-tiny step is milliseconds
//   (expected: under a minute per mechanism; mqar, four times its length, ran 16–18 steps/s on an H200).
// - mqar (T = 256, 16 pairs) and mqar-long (T = 1,024, 64 pairs, NSA reading about a fifth of dense
//   attention's keys per query): GPU presets. On an H200 (WebGPU engine, 2026-11-28, nine learn runs
//   sharing the GPU, 11–18 steps/s each, both with two key/value groups, before the per-head
//   selection below): mqar dense 99.6 % at step 500 (30 s), NSA 93.5 % at step 700 then a collapse
//   to 66 % and 92.2 % at 3,000 (188 s), window at chance; mqar-long dense 99.95 % at step 1,600
//   (91 s), NSA 74.1 % (331 s for 4,000 steps; 78 % of its answers' sources selected; RoPE base
//   10⁴), window at chance. On the CPU (PyTorch engine, batch 8):
//   - mqar (an eighth of its batch): NSA 71.5 % at step 3,000 with two groups and peak 3e-3 (12.9
//     min); with a selection per head 96.9 % at step 1,600 at 3e-3, then about 92 % to the end, and
//     **99.2 % at step 1,600 at 2e-3** (24 min; the preset now).
//   - mqar-long (a quarter of its batch) learns the lookup on 16 pairs at T = 256 first (its
//     warm-up): NSA reached 68.9 % of held-out answers in 4,000 steps (35 min) with two groups and
//     base 10⁴, and 93.9 % at step 3,800 with a selection per head and base 5·10⁵ (the preset now),
//     window-only at chance; without the warm-up it stayed at chance.
import type { RunConfig } from '../config';
import { type RecallTask, recallVocab } from '../data/recall';
import { PRESETS } from './presets';

interface MqarSize {
  T: number;
  pairs: number;
  /** Key and value alphabet (each). */
  vocab: number;
  dim: number;
  dk: number;
  nsa: { l: number; d: number; lSel: number; nSel: number; w: number; forceInit: boolean; forceLocal: number };
  steps: number;
  batchSize: number;
  lrMax: number;
  /** A sequence-length warm-up on fewer pairs (train.shortSeqSteps, shortSeqLen, shortSeqPairs). */
  warmup?: { steps: number; len: number; pairs: number };
  /** Key/value groups of the 4 heads (default 2); 4: each head selects its own blocks. */
  nKvGroups?: number;
  /** RoPE base (default 10⁴). */
  ropeTheta?: number;
}

const LAYERS = 2;
const SHORT_CONV = 4;

function mqarPreset(s: MqarSize): RunConfig {
  const task: RecallTask = {
    keys: s.vocab,
    values: s.vocab,
    fillers: 1,
    pairs: s.pairs,
    queries: s.pairs,
    minDistance: LAYERS * (s.nsa.w - 1 + SHORT_CONV - 1) + 1,
    minStart: s.nsa.lSel,
    layout: 'mqar',
  };
  return {
    model: {
      vocabSize: recallVocab(task).size,
      dim: s.dim,
      nLayers: LAYERS,
      nHeads: 4,
      nKvGroups: s.nKvGroups ?? 2,
      dk: s.dk,
      dv: s.dk,
      ffnHidden: 0,
      seqLen: s.T,
      ropeTheta: s.ropeTheta ?? 10000,
      normEps: 1e-5,
      attention: 'nsa',
      initStd: 0.02,
      // The key order of every other preset (the page's links diff configs key by key).
      nsa: {
        l: s.nsa.l,
        d: s.nsa.d,
        lSel: s.nsa.lSel,
        nSel: s.nsa.nSel,
        w: s.nsa.w,
        phi: 'avg',
        forceInit: s.nsa.forceInit,
        forceLocal: s.nsa.forceLocal,
        sharedKV: false,
        gates: { kind: 'none' },
      },
      posEncoding: 'rope',
      shortConv: SHORT_CONV,
    },
    train: {
      ...PRESETS.tiny.train,
      steps: s.steps,
      batchSize: s.batchSize,
      lrMax: s.lrMax,
      lrMin: s.lrMax / 10,
      warmupSteps: 50,
      evalEvery: 100,
      evalBatches: 4,
      ...(s.warmup && { shortSeqSteps: s.warmup.steps, shortSeqLen: s.warmup.len, shortSeqPairs: s.warmup.pairs }),
    },
    data: { source: 'recall', tokenizer: 'byte', recall: task },
  };
}

export const MQAR_PRESETS = {
  // T = 64: 8 pairs in blocks 1–2, 8 queries in the last 20 positions; NSA reads block 0, the
  // query's block and two more.
  'mqar-tiny': mqarPreset({
    T: 64,
    pairs: 8,
    vocab: 64,
    dim: 64,
    dk: 16,
    nsa: { l: 8, d: 4, lSel: 8, nSel: 4, w: 8, forceInit: true, forceLocal: 1 },
    // The schedule's length: NSA reaches 99 % at about step 1,600 of it (the learning rate still
    // high); over a 1,500-step schedule it stalled at 76 % (docs/benchmarks.md).
    steps: 3000,
    batchSize: 64,
    lrMax: 3e-3,
  }),
  mqar: mqarPreset({
    T: 256,
    pairs: 16,
    vocab: 128,
    dim: 128,
    dk: 32,
    nsa: { l: 16, d: 8, lSel: 16, nSel: 4, w: 16, forceInit: true, forceLocal: 1 },
    steps: 3000,
    batchSize: 64,
    // A selection per head at peak 2e-3: on the CPU at batch 8, 99.2 % of held-out answers at step
    // 1,600 (24 min). At 3e-3 it peaked at 96.9 % and slid to about 92 %; two groups at 3e-3 reached
    // 71.5 % at step 3,000 (docs/benchmarks.md, MQAR).
    lrMax: 2e-3,
    nKvGroups: 4,
  }),
  // Per query NSA reads about T/16 compressed blocks, 4·16 selected keys and a window of 16: about
  // 102 keys on average (counted) against dense attention's (T + 1)/2 = 512. A curriculum: its first
  // 1,500 steps train the mqar task (T = 256, 16 pairs), then 64 pairs at T = 1,024. At batch 8 on a
  // CPU, NSA reached 68.9 % with it; without it, near chance through 1,100 steps, and through 3,500
  // with 1,500 of them on 64 pairs at T = 384 (docs/benchmarks.md, MQAR). The GPU's learn step
  // trains batch 32.
  'mqar-long': mqarPreset({
    T: 1024,
    pairs: 64,
    vocab: 256,
    dim: 128,
    dk: 32,
    nsa: { l: 16, d: 16, lSel: 16, nSel: 4, w: 16, forceInit: false, forceLocal: 1 },
    steps: 4000,
    batchSize: 32,
    lrMax: 2e-3,
    warmup: { steps: 1500, len: 256, pairs: 16 },
    // A selection per head (each head picks its own blocks from its own compressed attention) and
    // RoPE base 5·10⁵: on the CPU at batch 8, 93.9 % of held-out answers at step 3,800, every
    // selected source read right, where two groups and base 10⁴ reached 68.9 % (docs/benchmarks.md, MQAR).
    nKvGroups: 4,
    ropeTheta: 500_000,
  }),
} satisfies Record<string, RunConfig>;

export type MqarPresetName = keyof typeof MQAR_PRESETS;
export const MQAR_PRESET_NAMES = Object.keys(MQAR_PRESETS) as MqarPresetName[];

/** A deep copy of an MQAR preset, safe to edit. */
export function mqarPresetConfig(name: MqarPresetName): RunConfig {
  return structuredClone(MQAR_PRESETS[name]);
}
