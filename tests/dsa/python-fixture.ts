// The DSA twin's numbers on one small batch, written to python/tests/fixtures/dsa-twin.json for the
// PyTorch implementation's parity test (python/tests/test_dsa_twin.py): inputs, index scores,
// selections, both phases' outputs, KL rows, L_I and its gradients into qI, kI, wI.
import type { DsaConfig, DsaPhase } from '../../src/definitions/dsa-config';
import { dsaAttentionForwardRef } from '../../src/reference/dsa/attention';
import { denseSlots, indexerBackwardRef, indexScoresRef, selectedSlots } from '../../src/reference/dsa/indexer';
import { indexerKlRef } from '../../src/reference/dsa/kl';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import { randn, rng } from '../helpers/compare';

export const DSA_FIXTURE_PATH = 'python/tests/fixtures/dsa-twin.json';

export function dsaFixtureJson(): string {
  const shape = { B: 2, T: 9, H: 4, G: 2, dk: 4, dv: 3 };
  const cfg: DsaConfig = { indexHeads: 2, indexDim: 4, topK: 3, warmupSteps: 1, lossWeight: 0.7 };
  const { B, T, H, G, dk, dv } = shape;
  const HI = cfg.indexHeads;
  const dI = cfg.indexDim;
  const r = rng(2026);
  const inputs = {
    qI: randn(B * T * HI * dI, r),
    kI: randn(B * T * dI, r),
    wI: randn(B * T * HI, r),
    q: randn(B * T * H * dk, r),
    k: randn(B * T * G * dk, r),
    v: randn(B * T * G * dv, r),
  };
  inputs.wI.fill(0, 4 * HI, 5 * HI); // sequence 0, query 4: every score 0 — ties to the lowest tokens
  const one = { T, H, G, dk, dv };
  const d = { T, indexHeads: HI, indexDim: dI };
  const gradScale = cfg.lossWeight / (B * T);
  const scores: number[] = [];
  const sel: number[] = [];
  const out: Record<DsaPhase, number[]> = { warmup: [], sparse: [] };
  const klRows: Record<DsaPhase, number[]> = { warmup: [], sparse: [] };
  const loss: Record<DsaPhase, number> = { warmup: 0, sparse: 0 };
  const grads: Record<DsaPhase, { qI: number[]; kI: number[]; wI: number[] }> = {
    warmup: { qI: [], kI: [], wI: [] },
    sparse: { qI: [], kI: [], wI: [] },
  };
  for (let b = 0; b < B; b++) {
    const part = (a: Float64Array, n: number) => a.subarray(b * T * n, (b + 1) * T * n);
    const [qI, kI, wI] = [part(inputs.qI, HI * dI), part(inputs.kI, dI), part(inputs.wI, HI)];
    const [q, k, v] = [part(inputs.q, H * dk), part(inputs.k, G * dk), part(inputs.v, G * dv)];
    const I = indexScoresRef(qI, kI, wI, d);
    const s = selectTokensRef(I, T, G, cfg.topK);
    scores.push(...I);
    for (let t = 0; t < T; t++) sel.push(...s.subarray(t * G * cfg.topK, t * G * cfg.topK + cfg.topK));
    for (const phase of ['warmup', 'sparse'] as DsaPhase[]) {
      const fwd =
        phase === 'warmup'
          ? dsaAttentionForwardRef(q, k, v, selectTokensRef(I, T, G, T), one, T)
          : dsaAttentionForwardRef(q, k, v, s, one, cfg.topK);
      const slots = phase === 'warmup' ? denseSlots(T) : selectedSlots(s, G, cfg.topK);
      const kl = indexerKlRef(q, k, fwd.lse, I, slots, one, gradScale);
      const g = indexerBackwardRef(qI, kI, wI, kl.dI, slots, d);
      out[phase].push(...fwd.o);
      klRows[phase].push(...kl.klRows);
      for (const x of kl.klRows) loss[phase] += gradScale * x;
      grads[phase].qI.push(...g.dqI);
      grads[phase].kI.push(...g.dkI);
      grads[phase].wI.push(...g.dwI);
    }
  }
  const plain = (a: Float64Array) => Array.from(a);
  return `${JSON.stringify({
    note: 'Written by tests/dsa/python-fixture.ts from the float64 DSA twin (docs/dsa-spec.md); DSA_WRITE_FIXTURE=1 npx vitest run tests/dsa/python-fixture.test.ts rewrites it.',
    shape,
    dsa: cfg,
    inputs: Object.fromEntries(Object.entries(inputs).map(([n, a]) => [n, plain(a)])),
    expected: { scores, sel, out, klRows, loss, grads },
  })}\n`;
}
