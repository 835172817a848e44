// GPU reverse index of the NSA selection (count, prefix-sum, fill) vs the reference
// selectionReverseIndex, exactly, per sequence; deterministic; rejects bad inputs before GPU work.
import { describe, expect, it } from 'vitest';

import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { type BufferSlice, createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import type { NsaAttnShape } from '../../src/kernels/nsa-attention';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths, type NsaReverseIndexSlices } from '../../src/kernels/nsa-reverse-index';
import { selectionReverseIndex } from '../../src/reference/nsa/selection';
import { rng } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { randomSelection, seqShape } from './attention-harness';

interface Index {
  counts: Int32Array;
  offsets: Int32Array;
  queries: Int32Array;
}

async function gpuIndex(gpu: GpuContext, s: NsaAttnShape, cfg: NsaConfig, sel: Int32Array, reruns = 1): Promise<Index[]> {
  const n = nsaReverseIndexLengths(s, cfg);
  const arena = createArena(gpu, 'rev', [
    { name: 'sel', bytes: sel.length * 4 },
    { name: 'counts', bytes: n.counts * 4 },
    { name: 'offsets', bytes: n.offsets * 4 },
    { name: 'queries', bytes: n.queries * 4 },
  ]);
  const reverse: NsaReverseIndexSlices = { counts: arena.get('counts'), offsets: arena.get('offsets'), queries: arena.get('queries') };
  gpu.write(arena.get('sel'), sel);
  const list = await nsaReverseIndexDispatches(gpu, { ...s, cfg, sel: arena.get('sel'), reverse });
  const out: Index[] = [];
  for (let i = 0; i < reruns; i++) {
    for (const [k, len] of Object.entries(n)) gpu.write(arena.get(k), new Int32Array(len).fill(-7));
    gpu.run(list);
    out.push({
      counts: await gpu.readI32(reverse.counts, n.counts),
      offsets: await gpu.readI32(reverse.offsets, n.offsets),
      queries: await gpu.readI32(reverse.queries, n.queries),
    });
  }
  for (const b of arena.buffers) b.destroy();
  return out;
}

/** The batched layout built from selectionReverseIndex of each sequence. */
function referenceIndex(s: NsaAttnShape, cfg: NsaConfig, sel: Int32Array): Index {
  const nB = numSelBlocks(s.T, cfg);
  const R = s.B * s.G * nB;
  const counts = new Int32Array(R);
  const offsets = new Int32Array(R + 1);
  const lists: number[] = [];
  const per = s.T * s.G * cfg.nSel;
  for (let b = 0; b < s.B; b++) {
    const ref = selectionReverseIndex(sel.subarray(b * per, (b + 1) * per), seqShape(s), cfg);
    const base = lists.length;
    for (let r = 0; r < s.G * nB; r++) {
      counts[b * s.G * nB + r] = ref.offsets[r + 1] - ref.offsets[r];
      offsets[b * s.G * nB + r] = base + ref.offsets[r];
    }
    lists.push(...ref.queries);
  }
  offsets[R] = lists.length;
  const queries = new Int32Array(R + 1 + lists.length);
  queries.set(offsets);
  queries.set(lists, R + 1);
  return { counts, offsets, queries };
}

const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
const dims = (B: number, T: number, G: number): NsaAttnShape => ({ B, T, H: 2 * G, G, dk: 4, dv: 4 });

const CASES: Array<[string, NsaConfig, NsaAttnShape]> = [
  ['base, B=2, T=37', BASE, dims(2, 37, 2)],
  ['T < lSel (one block)', BASE, dims(1, 5, 2)],
  ['forceInit false, no forced blocks', { ...BASE, nSel: 2, forceInit: false, forceLocal: 0 }, dims(2, 35, 1)],
  ['nSel ≥ blocks (every query selects every candidate)', { ...BASE, lSel: 4, nSel: 6, forceLocal: 2 }, dims(1, 21, 3)],
  ['many chunks: R = 600 > WG, lists longer than WG, B=2', { ...BASE, lSel: 4, nSel: 5, forceLocal: 2 }, dims(2, 600, 2)],
];

describe('NSA reverse index on the GPU', () => {
  it.each(CASES)('equals selectionReverseIndex exactly: %s', async (_name, cfg, s) => {
    const gpu = await getGpu();
    const sel = randomSelection(s, cfg, rng(s.T + cfg.nSel));
    const [g] = await gpuIndex(gpu, s, cfg, sel);
    const ref = referenceIndex(s, cfg, sel);
    expect(g.counts).toEqual(ref.counts);
    expect(g.offsets).toEqual(ref.offsets);
    // Header and lists; the tail past the total (sized for the fullest selection) is untouched.
    expect(g.queries.subarray(0, ref.queries.length)).toEqual(ref.queries);
    expect(g.queries.subarray(ref.queries.length).every((x) => x === -7)).toBe(true);
    expect(gpu.reports).toEqual([]);
  });

  it('is deterministic (bit-identical reruns)', async () => {
    const gpu = await getGpu();
    const [, cfg, s] = CASES[4];
    const [a, b] = await gpuIndex(gpu, s, cfg, randomSelection(s, cfg, rng(3)), 2);
    expect(b).toEqual(a);
  });

  it('rejects a bad config or a short slice, naming it, before any GPU work', async () => {
    const gpu = await getGpu();
    const s = dims(1, 10, 1);
    const slice = (bytes: number): BufferSlice => ({ buffer: undefined as unknown as GPUBuffer, offset: 0, size: bytes });
    const n = nsaReverseIndexLengths(s, BASE);
    const reverse = { counts: slice(n.counts * 4), offsets: slice(n.offsets * 4), queries: slice(n.queries * 4) };
    const created = gpu.counters.buffersCreated;
    await expect(nsaReverseIndexDispatches(gpu, { ...s, cfg: { ...BASE, nSel: 0 }, sel: slice(1 << 16), reverse })).rejects.toThrow(
      /nsa\.nSel/,
    );
    await expect(nsaReverseIndexDispatches(gpu, { ...s, cfg: BASE, sel: slice(4), reverse })).rejects.toThrow(/sel holds 4 bytes/);
    await expect(
      nsaReverseIndexDispatches(gpu, { ...s, cfg: BASE, sel: slice(1 << 16), reverse: { ...reverse, queries: slice(8) } }),
    ).rejects.toThrow(/reverse\.queries/);
    expect(gpu.counters.buffersCreated).toBe(created);
  });
});
