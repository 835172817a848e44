// Runs the DSA indexer kernels (scores, top-k, KL loss, the reverse index, the indexer backward)
// on one arena for the parity tests, and the float64 twin per sequence on the same inputs.
import { type DsaConfig, type DsaPhase, dsaSlotWidth, tokenSelectionAsNsa } from '../../src/definitions/dsa-config';
import type { AttentionShape } from '../../src/definitions/shapes';
import { createArena } from '../../src/gpu/arena';
import type { GpuContext } from '../../src/gpu/context';
import { dsaIndexBackwardDispatches } from '../../src/kernels/dsa-index-backward';
import { dsaIndexLossDispatch } from '../../src/kernels/dsa-index-loss';
import { dsaIndexScoresDispatch } from '../../src/kernels/dsa-index-scores';
import { dsaTopKDispatch } from '../../src/kernels/dsa-topk';
import { nsaReverseIndexDispatches, nsaReverseIndexLengths } from '../../src/kernels/nsa-reverse-index';

export interface GpuIndexerRun {
  scores: Float32Array;
  sel: Int32Array;
  /** Per phase: klRows [B,T], dScores [B,T,W], dqI, dwI, dkI. */
  phases: Record<DsaPhase, { klRows: Float32Array; dScores: Float32Array; dqI: Float32Array; dwI: Float32Array; dkI: Float32Array }>;
}

export interface IndexerInputs {
  qI: Float64Array;
  kI: Float64Array;
  wI: Float64Array;
  q: Float64Array;
  k: Float64Array;
  /** Main attention lse [B,H,T] per phase (dense for the warm-up, over the selection for sparse). */
  lse: Record<DsaPhase, Float64Array>;
}

/**
 * Scores, top-k (lanes as given) and the reverse index of the GPU's own selection, then per phase
 * the loss and the backward. `lse.sparse` is the main attention's over the twin's selection, which
 * the test asserts the GPU's equals.
 */
export async function runIndexerGpu(
  gpu: GpuContext,
  s: AttentionShape,
  cfg: DsaConfig,
  x: IndexerInputs,
  gradScale: number,
  lanes?: 64 | 1,
): Promise<GpuIndexerRun> {
  const { B, T, H, G, dk } = s;
  const HI = cfg.indexHeads;
  const dI = cfg.indexDim;
  const rev = nsaReverseIndexLengths(s, tokenSelectionAsNsa(cfg.topK));
  const W = Math.max(T, cfg.topK);
  const f = (name: string, n: number) => ({ name, bytes: Math.max(1, n) * 4 });
  const arena = createArena(gpu, 'dsa-test', [
    f('qI', B * T * HI * dI),
    f('kI', B * T * dI),
    f('wI', B * T * HI),
    f('q', B * T * H * dk),
    f('k', B * T * G * dk),
    f('lse', B * H * T),
    f('scores', B * T * T),
    f('sel', B * T * G * cfg.topK),
    f('dScores', B * T * W),
    f('klRows', B * T),
    f('dqI', B * T * HI * dI),
    f('dwI', B * T * HI),
    f('dkI', B * T * dI),
    f('counts', rev.counts),
    f('offsets', rev.offsets),
    f('queries', rev.queries),
  ]);
  const a = (k: string) => arena.get(k);
  for (const k of ['qI', 'kI', 'wI', 'q', 'k'] as const) gpu.write(a(k), new Float32Array(x[k]));
  gpu.write(a('scores'), new Float32Array(B * T * T).fill(NaN)); // garbage: must be overwritten
  gpu.write(a('sel'), new Int32Array(B * T * G * cfg.topK).fill(12345));
  const shape = { ...s, cfg };
  gpu.run([
    await dsaIndexScoresDispatch(gpu, { ...shape, qI: a('qI'), kI: a('kI'), wI: a('wI'), scores: a('scores') }),
    await dsaTopKDispatch(gpu, { ...shape, scores: a('scores'), sel: a('sel'), lanes }),
    ...(await nsaReverseIndexDispatches(gpu, {
      ...s,
      cfg: tokenSelectionAsNsa(cfg.topK),
      sel: a('sel'),
      reverse: { counts: a('counts'), offsets: a('offsets'), queries: a('queries') },
    })),
  ]);
  const scores = await gpu.readF32(a('scores'), B * T * T);
  const sel = await gpu.readI32(a('sel'), B * T * G * cfg.topK);
  const phases = {} as GpuIndexerRun['phases'];
  for (const phase of ['warmup', 'sparse'] as const) {
    const Wp = dsaSlotWidth(phase, T, cfg.topK);
    gpu.write(a('lse'), new Float32Array(x.lse[phase]));
    for (const k of ['dScores', 'klRows', 'dqI', 'dwI', 'dkI']) gpu.write(a(k), new Float32Array(a(k).size / 4).fill(NaN));
    gpu.run([
      await dsaIndexLossDispatch(gpu, {
        ...shape,
        phase,
        gradScale,
        q: a('q'),
        k: a('k'),
        lse: a('lse'),
        scores: a('scores'),
        sel: a('sel'),
        dScores: a('dScores'),
        klRows: a('klRows'),
      }),
      ...(await dsaIndexBackwardDispatches(gpu, {
        ...shape,
        phase,
        qI: a('qI'),
        kI: a('kI'),
        wI: a('wI'),
        dScores: a('dScores'),
        sel: a('sel'),
        reverse: a('queries'),
        dqI: a('dqI'),
        dwI: a('dwI'),
        dkI: a('dkI'),
      })),
    ]);
    phases[phase] = {
      klRows: await gpu.readF32(a('klRows'), B * T),
      dScores: await gpu.readF32(a('dScores'), B * T * Wp),
      dqI: await gpu.readF32(a('dqI'), B * T * HI * dI),
      dwI: await gpu.readF32(a('dwI'), B * T * HI),
      dkI: await gpu.readF32(a('dkI'), B * T * dI),
    };
  }
  return { scores, sel, phases };
}
