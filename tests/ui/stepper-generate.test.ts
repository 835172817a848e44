// Generation panel logic: form validation, the decode trace of a streamed generation, and the
// ranges shown for a generated token — checked against the model's own prefill (decode = prefill)
// on a small NSA model decoded in float64 on the CPU; for a DSA model, the tokens each layer's
// query attended equal the sparse-phase prefill's selection.
import { describe, expect, it } from 'vitest';

import { sampleToken } from '../../src/decode/generate';
import type { ModelConfig, ModelNsaConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { type SelectionSnapshot, snapshotIssues, snapshotRanges } from '../../src/definitions/selection-snapshot';
import { initParams } from '../../src/model/init';
import { ModelDecoder } from '../../src/reference/decoder';
import { modelForwardRef } from '../../src/reference/model';
import { DEFAULT_FORM, parseGenerationForm } from '../../src/ui/generate/form';
import { generationSnapshots, generationTrace, pieceRanges, pieceTokens } from '../../src/ui/generate/trace';
import type { GeneratedPiece, GenerationModel, GenerationStart } from '../../src/ui/generate/types';
import { mulberry32 } from '../../src/util/random';
import { denseTestModel, nsaTestModel } from '../helpers/models';

describe('parseGenerationForm', () => {
  const m = { contextLength: 64, vocabSize: 256 };
  const ok = { ...DEFAULT_FORM, prompt: 'Hi', maxTokens: '63', temperature: '0', topK: '256', topP: '1', seed: '4294967295' };

  it('accepts the boundaries', () => {
    expect(parseGenerationForm(ok, m)).toEqual({
      request: { prompt: 'Hi', maxTokens: 63, temperature: 0, topK: 256, topP: 1, seed: 4294967295 },
      errors: {},
    });
    expect(parseGenerationForm(DEFAULT_FORM, m).request).not.toBeNull();
  });

  it.each([
    ['prompt', { prompt: '' }],
    ['maxTokens', { maxTokens: '64' }],
    ['maxTokens', { maxTokens: '0' }],
    ['maxTokens', { maxTokens: '2.5' }],
    ['temperature', { temperature: '-0.1' }],
    ['temperature', { temperature: '' }],
    ['temperature', { temperature: 'warm' }],
    ['temperature', { temperature: '11' }],
    ['topK', { topK: '257' }],
    ['topK', { topK: '-1' }],
    ['topP', { topP: '0' }],
    ['topP', { topP: '1.01' }],
    ['topP', { topP: '' }],
    ['seed', { seed: '4294967296' }],
    ['seed', { seed: '1e3' }],
  ] as const)('%s %j is refused with a message on that field only', (field, over) => {
    const r = parseGenerationForm({ ...ok, ...over }, m);
    expect(r.request).toBeNull();
    expect(Object.keys(r.errors)).toEqual([field]);
    expect(r.errors[field]!.length).toBeGreaterThan(10);
  });
});

const cfg: ModelConfig = nsaTestModel(40, { initStd: 0.5 }, { nSel: 3 });
const nsa: ModelNsaConfig = cfg.nsa!;
const model: GenerationModel & { nsa: ModelNsaConfig } = {
  nsa,
  H: cfg.nHeads,
  G: cfg.nKvGroups,
  layers: cfg.nLayers,
  contextLength: cfg.seqLen,
  vocabSize: cfg.vocabSize,
  step: 17,
};

/** Streams like the worker: each generated token with the per-layer selection of its query. */
function stream(prompt: number[], n: number, seed: number) {
  const params = initParams(paramSpecs(cfg), seed);
  const dec = new ModelDecoder(cfg, params);
  const rand = mulberry32(seed);
  let last = prompt.map((id) => dec.step(id)).at(-1)!;
  const pieces: GeneratedPiece[] = [];
  for (let i = 0; i < n; i++) {
    const token = sampleToken(last.logits, { temperature: 1, topK: 0 }, rand);
    pieces.push({ index: i, token, text: `<${token}>`, t: last.t, selection: last.nsa.map((L) => L.selection.slice()) });
    if (i + 1 < n) last = dec.step(token);
  }
  const start: GenerationStart = { promptTokens: prompt, promptPieces: prompt.map((id) => `<${id}>`) };
  return { params, start, pieces };
}

/** Prefill snapshots of `tokens` (padded to the context; causality keeps the prefix exact). */
function prefill(params: Map<string, Float32Array>, tokens: number[]): SelectionSnapshot[][] {
  const padded = [...tokens, ...new Array(cfg.seqLen - tokens.length).fill(0)];
  const f = modelForwardRef(cfg, new Map([...params].map(([k, v]) => [k, Float64Array.from(v)])), padded, new Array(cfg.seqLen).fill(0), 1);
  const T = tokens.length;
  const G = cfg.nKvGroups;
  return f.layers.map((L) =>
    Array.from({ length: G }, (_, g) => {
      const sel = new Int32Array(T * nsa.nSel);
      const all = L.attnCache.nsa![0].fwd.selection;
      for (let t = 0; t < T; t++) sel.set(all.subarray((t * G + g) * nsa.nSel, (t * G + g + 1) * nsa.nSel), t * nsa.nSel);
      return { step: 0, layer: 0, group: g, T, cfg: nsa, H: cfg.nHeads, G, tokens: Int32Array.from(tokens), sel, scores: null };
    }),
  );
}

describe('generation trace and token ranges', () => {
  it('tokens fed are the prompt and all generated tokens but the last; queries t = P − 1 + index', () => {
    const { start, pieces } = stream([3, 1, 4, 1, 5], 6, 2);
    const tr = generationTrace(start, pieces, nsa, cfg.nKvGroups);
    expect(tr.tokens).toEqual([3, 1, 4, 1, 5, ...pieces.slice(0, 5).map((p) => p.token)]);
    expect(new Set(tr.selections.map((d) => d.t))).toEqual(new Set([4, 5, 6, 7, 8, 9]));
    expect(tr.selections.length).toBe(6 * cfg.nLayers * cfg.nKvGroups);
    const shifted = pieces.map((p) => ({ ...p, t: p.t + 1 }));
    expect(() => generationTrace(start, shifted, nsa, cfg.nKvGroups)).toThrow(/expected index 0, t = 4/);
  });

  it.each([
    [1, 30],
    [12, 20],
    [25, 14],
  ])('prompt of %i, %i tokens: snapshots and ranges equal the prefill of the same tokens', (P, n) => {
    const prompt = Array.from({ length: P }, (_, i) => (i * 11 + 3) % cfg.vocabSize);
    const { params, start, pieces } = stream(prompt, n, 5 + P);
    const snaps = generationSnapshots(start, pieces, model, 17);
    const fed = [...prompt, ...pieces.slice(0, -1).map((p) => p.token)];
    const ref = prefill(params, fed);
    expect(snaps.map((s) => [s.layer, s.group, s.T, s.step, s.source])).toEqual(
      [0, 1].flatMap((l) => [0, 1].map((g) => [l, g, fed.length, 17, 'decode'])),
    );
    for (const s of snaps) {
      expect(snapshotIssues(s)).toEqual([]);
      // Absent when every row is recorded (a one-token prompt).
      const rec = s.recorded ? [...s.recorded] : fed.map(() => 1);
      expect(P === 1).toBe(s.recorded === undefined);
      expect(rec).toEqual(fed.map((_, t) => (t >= P - 1 ? 1 : 0)));
      for (let t = P - 1; t < s.T; t++)
        expect(snapshotRanges(s, t), `layer ${s.layer} group ${s.group} t=${t}`).toEqual(snapshotRanges(ref[s.layer][s.group], t));
    }
    for (const p of pieces) {
      for (const r of pieceRanges(p, nsa, cfg.nKvGroups)) expect(r.ranges).toEqual(snapshotRanges(ref[r.layer][r.group], p.t));
    }
    // Some query in this run selected a non-forced block (the comparison is not only the forced ones).
    const nonForced = snaps.some((s) =>
      Array.from({ length: s.T }, (_, t) => t).some((t) => t >= P - 1 && snapshotRanges(s, t).some((r) => r.forced.includes(false))),
    );
    expect(nonForced).toBe(true);
  });

  it('a dense model (no selection) has no ranges', () => {
    expect(pieceRanges({ index: 0, token: 1, text: 'a', t: 3, selection: [] }, nsa, 2)).toEqual([]);
  });
});

describe('DSA generation: the tokens each layer attended', () => {
  const c: ModelConfig = denseTestModel(30, {
    initStd: 0.5,
    attention: 'dsa',
    dsa: { indexHeads: 2, indexDim: 4, topK: 5, warmupSteps: 0, lossWeight: 1 },
  });
  const k = c.dsa!.topK;
  const G = c.nKvGroups;

  it('equal the sparse-phase prefill of the same tokens; reads min(k, t + 1) per group and t + 1 indexer keys', () => {
    const params = initParams(paramSpecs(c), 8);
    const p64 = new Map([...params].map(([n, v]) => [n, Float64Array.from(v)]));
    const dec = new ModelDecoder(c, params);
    const rand = mulberry32(3);
    const fed = [4, 9, 1];
    let last = fed.map((id) => dec.step(id)).at(-1)!;
    const pieces: GeneratedPiece[] = [];
    for (let i = 0; i < 20; i++) {
      const token = sampleToken(last.logits, { temperature: 1, topK: 0 }, rand);
      pieces.push({ index: i, token, text: `<${token}>`, t: last.t, selection: last.nsa.map((L) => L.selection.slice()) });
      if (i + 1 < 20) {
        fed.push(token);
        last = dec.step(token);
      }
    }
    const padded = [...fed, ...new Array(c.seqLen - fed.length).fill(0)];
    const ref = modelForwardRef(c, p64, padded, new Array(c.seqLen).fill(0), 1, { dsaPhase: 'sparse' });
    let sparse = 0;
    for (const p of pieces) {
      const layers = pieceTokens(p, k, G);
      expect(layers.map((r) => r.layer)).toEqual([0, 1]);
      for (const r of layers) {
        const want = Array.from(ref.layers[r.layer].attnCache.dsa!.seqs[0].sel.subarray(p.t * G * k, p.t * G * k + k)).filter(
          (s) => s >= 0,
        );
        expect(r.tokens, `layer ${r.layer} t=${p.t}`).toEqual(want);
        expect(r.keysRead).toBe(Math.min(k, p.t + 1));
        expect(r.indexKeysRead).toBe(p.t + 1);
        if (r.keysRead < p.t + 1) sparse++;
      }
    }
    expect(sparse).toBeGreaterThan(0);
  });

  it('an invalid selection throws, naming the layer', () => {
    const row = (xs: number[]) => Int32Array.from([...xs, ...xs]);
    const piece = (sel: Int32Array[]): GeneratedPiece => ({ index: 0, token: 1, text: 'a', t: 3, selection: sel });
    expect(pieceTokens(piece([row([0, 1, 2, 3, -1])]), 5, 2)[0].tokens).toEqual([0, 1, 2, 3]);
    expect(() => pieceTokens(piece([row([0, 1, 2, -1, -1])]), 5, 2)).toThrow(/layer 0: 3 tokens selected, expected min\(k, t \+ 1\) = 4/);
    expect(() => pieceTokens(piece([row([0, 1, 4, 2, -1])]), 5, 2)).toThrow(/token 4 is after the query t = 3/);
    expect(() => pieceTokens(piece([row([0, 2, 1, 3, -1])]), 5, 2)).toThrow(/not ascending/);
    expect(() => pieceTokens(piece([Int32Array.from([0, 1, 2, 3, -1, 0, 1, 2, -1, -1])]), 5, 2)).toThrow(/group 1's tokens differ/);
  });
});
