import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { embeddingBackwardDispatch, embeddingForwardDispatch } from '../../src/kernels/embedding';
import { buildTokenIndex, tokenIndexLength } from '../../src/kernels/embedding-index';
import { embeddingBackwardRef, embeddingForwardRef } from '../../src/reference/embedding';
import { expectClose, randn, rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';

function randTokens(N: number, V: number, r: () => number): Int32Array {
  const t = new Int32Array(N);
  for (let i = 0; i < N; i++) t[i] = Math.floor(r() * V);
  return t;
}

describe('buildTokenIndex', () => {
  it('lays out [U, uniq, segStart, order] for a small batch', () => {
    const idx = buildTokenIndex(new Int32Array([5, 2, 5, 9, 2, 5]));
    // U=3; uniq 2,5,9 (+ −1 padding); segStart 0,2,5,6 (+ N padding); order by token then position.
    expect(Array.from(idx)).toEqual([3, 2, 5, 9, -1, -1, -1, 0, 2, 5, 6, 6, 6, 6, 1, 4, 0, 2, 5, 3]);
    expect(idx.length).toBe(tokenIndexLength(6));
  });

  it('is a valid grouping of every position for random batches, and writes into out', () => {
    const r = rng(1);
    for (const [N, V] of [
      [1, 1],
      [40, 3],
      [257, 1000],
      [64, 1],
    ]) {
      const tokens = randTokens(N, V, r);
      const out = new Int32Array(tokenIndexLength(N) + 3).fill(123);
      const idx = buildTokenIndex(tokens, out);
      expect(idx).toBe(out);
      const U = idx[0];
      expect(U).toBe(new Set(tokens).size);
      const seen = new Array<number>(N).fill(0);
      for (let u = 0; u < U; u++) {
        if (u > 0) expect(idx[1 + u]).toBeGreaterThan(idx[1 + u - 1]);
        const s0 = idx[1 + N + u];
        const s1 = idx[2 + N + u];
        expect(s1).toBeGreaterThan(s0);
        for (let k = s0; k < s1; k++) {
          const p = idx[2 + 2 * N + k];
          expect(tokens[p]).toBe(idx[1 + u]);
          if (k > s0) expect(p).toBeGreaterThan(idx[2 + 2 * N + k - 1]);
          seen[p]++;
        }
      }
      expect(idx[1 + N + U]).toBe(N);
      expect(seen.every((c) => c === 1)).toBe(true);
      expect(out[tokenIndexLength(N)]).toBe(123); // nothing written past the index
    }
  });

  it('rejects negative tokens and a short out array', () => {
    expect(() => buildTokenIndex(new Int32Array([1, -1]))).toThrow(/tokens\[1\]/);
    expect(() => buildTokenIndex(new Int32Array(4), new Int32Array(13))).toThrow(/out/);
  });
});

describe('embedding reference', () => {
  it('backward equals central finite differences of Σ dout ⊙ forward (float64, rel ≤ 1e-8)', () => {
    const r = rng(2);
    const [N, V, C] = [9, 4, 3];
    const tokens = randTokens(N, V, r);
    tokens[0] = tokens[1] = tokens[2]; // a repeat for sure
    const table = randn(V * C, r);
    const dout = randn(N * C, r);
    const loss = (t: Float64Array) => embeddingForwardRef(tokens, t, N, C).reduce((s, v, i) => s + v * dout[i], 0);
    const fd = new Float64Array(V * C);
    const h = 1e-5;
    for (let i = 0; i < V * C; i++) {
      const p = table.slice();
      const m = table.slice();
      p[i] += h;
      m[i] -= h;
      fd[i] = (loss(p) - loss(m)) / (2 * h);
    }
    const g = embeddingBackwardRef(tokens, dout, V, C);
    expect(g.some((v) => v !== 0)).toBe(true);
    expectClose('dtable', g, fd, 1e-8);
  });
});

async function setup(gpu: GpuContext, N: number, V: number, C: number) {
  const arena = createArena(gpu, 'emb', [
    { name: 'tokens', bytes: N * 4 },
    { name: 'index', bytes: tokenIndexLength(N) * 4 },
    { name: 'table', bytes: V * C * 4 },
    { name: 'out', bytes: N * C * 4 },
    { name: 'dout', bytes: N * C * 4 },
    { name: 'dtable', bytes: V * C * 4 },
  ]);
  const s = (k: string) => arena.get(k);
  const fwd = await embeddingForwardDispatch(gpu, { tokens: s('tokens'), table: s('table'), out: s('out'), N, C });
  const bwd = await embeddingBackwardDispatch(gpu, { index: s('index'), dout: s('dout'), dtable: s('dtable'), N, C });
  return { s, fwd, bwd };
}

describe('embedding kernels', () => {
  const shapes: [string, number, number, number, (N: number, V: number, r: () => number) => Int32Array][] = [
    ['N=1 V=1 C=1', 1, 1, 1, randTokens],
    ['N=7 V=5 C=7', 7, 5, 7, randTokens],
    ['N=37 V=11 C=70 (repeats, 2 channel tiles)', 37, 11, 70, randTokens],
    ['N=300 V=50 C=16, all tokens equal', 300, 50, 16, (N) => new Int32Array(N).fill(17)],
    ['N=129 V=300 C=5, mostly distinct', 129, 300, 5, randTokens],
  ];

  it.each(shapes)(
    '%s: forward is an exact gather; backward accumulates onto dtable (rel RMS ≤ 1e-6: f32 sums)',
    async (_, N, V, C, gen) => {
      const gpu = await getGpu();
      const r = rng(N * 1000 + C);
      const tokens = gen(N, V, r);
      const table = new Float32Array(randn(V * C, r));
      const dout = new Float32Array(randn(N * C, r));
      const init = new Float32Array(randn(V * C, r));
      const { s, fwd, bwd } = await setup(gpu, N, V, C);
      gpu.write(s('tokens'), tokens);
      gpu.write(s('index'), buildTokenIndex(tokens));
      gpu.write(s('table'), table);
      gpu.write(s('dout'), dout);
      gpu.write(s('dtable'), init);
      gpu.run([fwd, bwd]);
      const out = await gpu.readF32(s('out'), N * C);
      expect(Array.from(out)).toEqual(Array.from(embeddingForwardRef(tokens, table, N, C), Math.fround));
      const dtable = await gpu.readF32(s('dtable'), V * C);
      const ref = embeddingBackwardRef(tokens, dout, V, C).map((g, i) => g + init[i]);
      expectClose('dtable', dtable, ref, 1e-6);
      // Rows of tokens absent from the batch keep their bits.
      const present = new Set(tokens);
      for (let v = 0; v < V; v++) {
        if (!present.has(v)) expect(Array.from(dtable.subarray(v * C, (v + 1) * C))).toEqual(Array.from(init.subarray(v * C, (v + 1) * C)));
      }
    },
  );

  it('backward is bit-identical across runs, and folds a grid of more than 65,535 workgroups', async () => {
    const gpu = await getGpu();
    const [N, V, C] = [70_000, 40, 1]; // N × 1 tile > 65,535 → a 2-D grid
    const r = rng(5);
    const tokens = randTokens(N, V, r);
    const dout = new Float32Array(randn(N * C, r));
    const { s, bwd } = await setup(gpu, N, V, C);
    gpu.write(s('index'), buildTokenIndex(tokens));
    gpu.write(s('dout'), dout);
    const runs: Uint32Array[] = [];
    for (let k = 0; k < 2; k++) {
      gpu.write(s('dtable'), new Float32Array(V * C));
      gpu.run([bwd]);
      runs.push(new Uint32Array((await gpu.readF32(s('dtable'), V * C)).buffer));
    }
    expect(runs[1]).toEqual(runs[0]);
    // ≤ 1e-5: each row is a sequential f32 sum of ~1,750 terms (measured 8e-7).
    expectClose('dtable', new Float32Array(runs[0].buffer), embeddingBackwardRef(tokens, dout, V, C), 1e-5);
  });

  it('writes NaN for a token outside [0, V)', async () => {
    const gpu = await getGpu();
    const [N, V, C] = [3, 4, 2];
    const { s, fwd } = await setup(gpu, N, V, C);
    gpu.write(s('tokens'), new Int32Array([1, 4, -1]));
    gpu.write(s('table'), new Float32Array([0, 1, 2, 3, 4, 5, 6, 7]));
    gpu.run([fwd]);
    const out = await gpu.readF32(s('out'), N * C);
    expect(Array.from(out.subarray(0, 2))).toEqual([2, 3]);
    expect(Array.from(out.subarray(2)).every(Number.isNaN)).toBe(true);
  });

  it('rejects bad arguments, naming the field', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'bad', [
      { name: 'a', bytes: 64 },
      { name: 'b', bytes: 64 },
      { name: 'c', bytes: 64 },
    ]);
    const [a, b, c] = ['a', 'b', 'c'].map((k) => arena.get(k));
    await expect(embeddingForwardDispatch(gpu, { tokens: a, table: b, out: c, N: 4, C: 0 })).rejects.toThrow(/C must be/);
    await expect(embeddingForwardDispatch(gpu, { tokens: a, table: b, out: c, N: 5, C: 4 })).rejects.toThrow(/out holds/);
    await expect(embeddingForwardDispatch(gpu, { tokens: a, table: b, out: c, N: 2, C: 17 })).rejects.toThrow(/table holds/);
    await expect(embeddingForwardDispatch(gpu, { tokens: a, table: b, out: b, N: 2, C: 2 })).rejects.toThrow(/table and out overlap/);
    await expect(embeddingBackwardDispatch(gpu, { index: a, dout: b, dtable: c, N: 6, C: 1 })).rejects.toThrow(/index holds/);
    await expect(embeddingBackwardDispatch(gpu, { index: a, dout: b, dtable: c, N: 2.5, C: 1 })).rejects.toThrow(/N must be/);
  });
});
