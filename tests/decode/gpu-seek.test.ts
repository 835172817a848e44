// GpuDecoder.seek (the benchmark's way to position T − 1 without feeding T tokens): a decoder
// moved to t by seek, with `fill` handing back exactly the K/V cache rows a second decoder wrote
// by feeding t tokens, then holds the same compressed cache (built by the emission rule) and gives
// the same logits, selections and read counts at every later position, bit for bit. Seeking back
// one token repeats a step exactly; other moves without fill are refused. DSA: the indexer key cache
// is filled too (after the layer's K/V), and the selections and both read counts follow.
import { describe, expect, it } from 'vitest';

import { type DecodeWork, GpuDecoder } from '../../src/decode/gpu-decoder';
import type { BufferSlice } from '../../src/gpu/arena';
import { getGpu } from '../helpers/gpu';
import { DSA_CASES, NSA_CASES, randomParams, randomTokens } from './helpers';

/** The decoder's work table (private: read here to copy its caches). */
const work = (d: GpuDecoder) => (d as unknown as { work: DecodeWork }).work;

/** The caches in the order seek fills them: per layer, per KV set K then V, the convolution rings, DSA's indexer keys. */
const caches = (d: GpuDecoder): BufferSlice[] =>
  work(d).layers.flatMap((l) => [...l.kv.flatMap((kv) => [kv.k, kv.v]), ...(l.convRing ?? []), ...(l.indexKeys ? [l.indexKeys] : [])]);

/** The compressed caches, per layer K then V. */
const compressedCaches = (d: GpuDecoder): BufferSlice[] =>
  work(d).layers.flatMap((l) => (l.compressed ? [l.compressed.k, l.compressed.v] : []));

describe('GpuDecoder.seek', () => {
  it.each([NSA_CASES[0], NSA_CASES[1], DSA_CASES[0]])(
    '%s: seek(t, rows of a fed decoder) = feeding t tokens, at every later position',
    async (_name, c) => {
      const gpu = await getGpu();
      const params = randomParams(c, 41);
      const T = c.seqLen;
      const t0 = Math.min(29, T - 6); // past several emitted blocks and a wrapped window ring (DSA: past k)
      const tokens = randomTokens(T, c.vocabSize, 9);
      const fed = await GpuDecoder.create(gpu, c, { batch: 2 });
      const sought = await GpuDecoder.create(gpu, c, { batch: 2 });
      fed.loadParams(params);
      sought.loadParams(params);
      for (let t = 0; t < t0; t++) await fed.step([tokens[t], tokens[T - 1 - t]], false);
      const rows: number[] = [];
      for (const slice of caches(fed)) for (const v of await gpu.readF32(slice)) rows.push(v);
      let i = 0;
      await sought.seek(t0, () => rows[i++]);
      expect(i).toBe(rows.length);
      expect(sought.length).toBe(t0);
      const [want, got] = [compressedCaches(fed), compressedCaches(sought)];
      expect(want.length).toBe(c.attention === 'nsa' ? 2 * c.nLayers : 0);
      for (const [i, slice] of want.entries())
        expect(Array.from(await gpu.readF32(got[i])), `compressed cache ${i}`).toEqual(Array.from(await gpu.readF32(slice)));
      for (let t = t0; t < T; t++) {
        const tok = [tokens[t], tokens[T - 1 - t]];
        const a = (await fed.step(tok))!;
        const out = (o: typeof a) => ({
          logits: Array.from(o.logits),
          selection: Array.from(o.selection),
          reads: Array.from(o.reads),
          indexReads: Array.from(o.indexReads),
        });
        const want = out(a);
        expect(out((await sought.step(tok))!), `t=${t}`).toEqual(want);
        // Back one token and the same step again: the same output.
        await sought.seek(t);
        expect(Array.from((await sought.step(tok))!.logits), `t=${t} repeated`).toEqual(want.logits);
      }
      fed.destroy();
      sought.destroy();
      expect(gpu.reports).toEqual([]);
    },
  );

  it('without fill only back one token; positions outside the capacity are refused', async () => {
    const gpu = await getGpu();
    const c = NSA_CASES[0][1];
    const dec = await GpuDecoder.create(gpu, c, { batch: 1, capacity: 12 });
    dec.loadParams(randomParams(c, 3));
    await dec.step([1], false);
    await dec.step([2], false);
    await expect(dec.seek(0)).rejects.toThrow(/only back one token \(length 2, asked 0\)/);
    await expect(dec.seek(12, () => 0)).rejects.toThrow(/position 12 outside \[0, 12\)/);
    await dec.seek(1);
    expect(dec.length).toBe(1);
    dec.destroy();
  });
});
