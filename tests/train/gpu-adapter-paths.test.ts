// Code paths only a hardware adapter takes, checked without one on the recording device (an H200's
// limits and SM count, src/gpu/recording-device.ts): SwiftShader splits nothing (fill target 0),
// so these never ran before the H200 run of 2026-11-28 found each of them broken:
//   - the resource footprint left out the matmul split scratch a plan allocates on a GPU (16.5 MiB);
//   - the compressed branch's dK/dV query split divided by zero key rows when T < l;
//   - DSA's top-k of thousands of tokens left the group kernels no room to stage the selection.
import { describe, expect, it } from 'vitest';

import { tokenSelectionAsNsa } from '../../src/definitions/dsa-config';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { createArena } from '../../src/gpu/arena';
import { NVIDIA_ADAPTER, RecordingGpu } from '../../src/gpu/recording-device';
import { matmulPartsFloats } from '../../src/kernels/matmul';
import { nsaBranchBackwardDispatches, nsaBranchForwardDispatch, nsaKeyRows } from '../../src/kernels/nsa-attention';
import { nsaReverseIndexLengths } from '../../src/kernels/nsa-reverse-index';
import { ModelPlan } from '../../src/model/plan';
import { preset } from '../../src/train/presets/presets';
import { checkRunResources, limitsOfAdapter, runFootprint } from '../../src/train/resources';
import { fuzzCases, runFuzzCase } from '../definitions/config-fuzz-cases';

/** The group kernels' forward and backward arguments of a branch, every slice large enough for the shape. */
function branchArgs(
  rec: RecordingGpu,
  s: { B: number; T: number; H: number; G: number; dk: number; dv: number },
  cfg: NsaConfig,
  branch: 'cmp' | 'sel',
) {
  const S = nsaKeyRows(branch, s.T, cfg);
  const rows = s.B * s.T * s.H;
  const floats: Record<string, number> = {
    q: rows * s.dk,
    k: Math.max(1, s.B * S * s.G * s.dk),
    v: Math.max(1, s.B * S * s.G * s.dv),
    out: rows * s.dv,
    lse: rows,
    dout: rows * s.dv,
    delta: rows,
    gradQ: rows * s.dk,
    gradK: Math.max(1, s.B * S * s.G * s.dk),
    gradV: Math.max(1, s.B * S * s.G * s.dv),
    sel: s.B * s.T * s.G * cfg.nSel,
    // Room for 64 query pieces of the compressed branch's head split (its keys are few).
    partK: Math.max(1, (branch === 'cmp' ? 64 : 1) * s.B * S * s.H * s.dk),
    partV: Math.max(1, (branch === 'cmp' ? 64 : 1) * s.B * S * s.H * s.dv),
    ...nsaReverseIndexLengths(s, cfg),
  };
  const arena = createArena(
    rec.gpu,
    'paths',
    Object.entries(floats).map(([name, n]) => ({ name, bytes: 4 * n })),
  );
  const a = (name: string) => arena.get(name);
  const selected = branch === 'sel' && {
    sel: a('sel'),
    reverse: { counts: a('counts'), offsets: a('offsets'), queries: a('queries') },
  };
  const forward = { ...s, branch, cfg, q: a('q'), k: a('k'), v: a('v'), out: a('out'), lse: a('lse'), variant: 'group' as const };
  return {
    forward: { ...forward, ...(selected && { sel: selected.sel }) },
    backward: {
      ...forward,
      ...selected,
      dout: a('dout'),
      delta: a('delta'),
      gradQ: a('gradQ'),
      gradK: a('gradK'),
      gradV: a('gradV'),
      headParts: { k: a('partK'), v: a('partV') },
      accumulateQ: false,
    },
  };
}

describe('hardware-adapter paths on the recording device (H200 limits, 132 SMs)', () => {
  it('the footprint counts the matmul split scratch: fuzzed configs = the arenas their plans allocate (within 5 slices)', async () => {
    const parts = matmulPartsFloats(NVIDIA_ADAPTER);
    expect(parts * 4).toBe(2 * 528 * 64 * 64 * 4); // 2 × 4 workgroups per SM × a 64×64 tile
    const configs = fuzzCases(77, 200, { onlyValidEdits: true, presets: ['tiny', 'recall'] })
      .map((c) => runFuzzCase({ ...c, argv: [...c.argv.slice(0, 4), '--steps', '2', '--batch', '2', ...c.argv.slice(4)] }))
      .flatMap((o) => (o.kind === 'valid' && !o.config.train.shortSeqSteps ? [o.config] : []))
      .slice(0, 6);
    expect(configs.length).toBe(6);
    for (const config of configs) {
      const rec = new RecordingGpu();
      const t = config.train;
      const plan = await ModelPlan.build(rec.gpu, config.model, {
        batchSize: t.batchSize,
        gradAccum: t.gradAccum,
        optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
      });
      const over = runFootprint(config, parts).gpuBytes - plan.gpuBytes;
      expect(over, JSON.stringify(config.model)).toBeGreaterThanOrEqual(0);
      expect(over).toBeLessThan(5 * 256);
      // Without the scratch the estimate falls short of the plan (what the GPU run caught).
      expect(runFootprint(config).gpuBytes).toBeLessThan(plan.gpuBytes);
    }
  });

  it('the resource check on an adapter counts its scratch: limitsOfAdapter carries it, checkRunResources applies it', () => {
    const config = preset('tiny');
    const parts = matmulPartsFloats(NVIDIA_ADAPTER);
    const need = runFootprint(config, parts).gpuBytes;
    const limits = (gpuMemoryBytes: number) => limitsOfAdapter(NVIDIA_ADAPTER.limits, 'H200', { gpuMemoryBytes, matmulPartsFloats: parts });
    expect(limits(need).matmulPartsFloats).toBe(parts);
    expect(checkRunResources(config, limits(need))).toEqual([]);
    expect(checkRunResources(config, limits(need - 1)).map((i) => i.message)).toEqual([expect.stringMatching(/GPU memory|arenas/)]);
  });

  it('T < l (no compressed block): the compressed branch backward builds with 1 query piece, not ∞', async () => {
    const rec = new RecordingGpu();
    const cfg: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };
    const s = { B: 2, T: 3, H: 4, G: 2, dk: 5, dv: 3 };
    const bwd = await nsaBranchBackwardDispatches(rec.gpu, branchArgs(rec, s, cfg, 'cmp').backward);
    const keyGrads = bwd.map((d) => rec.describe(d)).filter((d) => /keyGrads/.test(d.entryPoint));
    expect(keyGrads.length).toBeGreaterThan(0);
    for (const d of keyGrads) expect(d.workgroups[0]).toBe(0); // no key chunks, one piece each
  });

  it('DSA at T = 16,384 with top-k 2,559 (the bench’s budget): forward and dQ take the simple kernels, dK/dV the group ones', async () => {
    const rec = new RecordingGpu();
    const cfg = tokenSelectionAsNsa(2559);
    const s = { B: 1, T: 16384, H: 12, G: 2, dk: 64, dv: 64 };
    const args = branchArgs(rec, s, cfg, 'sel');
    expect(rec.describe(await nsaBranchForwardDispatch(rec.gpu, args.forward))).toMatchObject({
      kernel: 'nsa.simple.forward',
      entryPoint: 'forwardSel',
    });
    const bwd = await nsaBranchBackwardDispatches(rec.gpu, args.backward);
    const kernels = bwd.map((d) => rec.describe(d)).map((d) => `${d.kernel} ${d.entryPoint}`);
    expect(kernels).toContain('nsa.simple.dq backwardDqSel');
    // dK and dV in one pass: the recorded NVIDIA limits allow its 9 storage bindings.
    expect(kernels).toContain('nsa.dkdv.sel keyGradsSelBothSplit');
  });
});
