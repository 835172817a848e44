// npm run gpu:plan's report (src/bench/gpu-plan.ts, src/bench/dispatch-cost.ts) and flags
// (src/cli/gpu-plan-options.ts), in process and without a GPU: the roofline arithmetic and the
// under-fill flag on hand-made dispatches, every dispatch of both presets' steps costed, the decode
// attention's split filling an H100, and bad --gpu / --preset / --attention values refused.
import { describe, expect, it } from 'vitest';

import { dispatchCost, ncmp, selectedKeys } from '../../src/bench/dispatch-cost';
import { FILL_FACTOR, GPU_SPECS, LAUNCH_US, planReports, recordSteps, stepReport } from '../../src/bench/gpu-plan';
import { gpuPlanOptions } from '../../src/cli/gpu-plan-options';
import { UsageError } from '../../src/cli/usage';
import { numel } from '../../src/definitions/params';
import { createLayoutArena } from '../../src/gpu/arena';
import { computeUnits, DEFAULT_COMPUTE_UNITS, fillTarget } from '../../src/gpu/compute-units';
import type { RecordedDispatch } from '../../src/gpu/recording-device';
import { evalWgslInt, NVIDIA_ADAPTER, RecordingGpu, workgroupSizeOf } from '../../src/gpu/recording-device';
import { matmulSplitPlan, matmulTiles, TILING_GPU_LARGE, TILING_GPU_SMALL } from '../../src/kernels/matmul';
import { paramLayout, paramRuns } from '../../src/model/param-tensors';
import { longPreset } from '../../src/train/presets/long-preset';
import { preset } from '../../src/train/presets/presets';

const H100 = GPU_SPECS.h100;

function matmul(label: string, M: number, N: number, K: number, workgroups: number, accumulate = false): RecordedDispatch {
  return {
    label,
    kernel: 'matmul',
    entryPoint: 'matmul',
    workgroups: [workgroups, 1, 1],
    workgroupSize: [8, 8, 1],
    constants: {},
    uniforms: { P: { M, N, K, flags: accumulate ? 16 : 0 } },
    storage: [],
  };
}

describe('the report arithmetic', () => {
  it('matmul: 2·M·N·K FLOPs, compulsory bytes, roofline = max(FLOPs / peak, bytes / bandwidth)', () => {
    const ctx = { B: 1, dk: 64, dv: 64, t: 0 };
    expect(dispatchCost(matmul('a', 1024, 768, 768, 1), ctx)).toEqual({
      flops: 2 * 1024 * 768 * 768,
      bytes: 4 * (1024 * 768 + 768 * 768 + 1024 * 768),
    });
    // Accumulating reads C as well as writing it.
    expect(dispatchCost(matmul('a', 8, 4, 2, 1, true), ctx).bytes).toBe(4 * (16 + 8 + 2 * 32));
    const compute = matmul('compute', 4096, 4096, 4096, 4096);
    const memory = matmul('memory', 1, 4096, 4096, 4096);
    const r = stepReport('train', 1000, [compute, memory], ctx, H100);
    const [c, m] = r.rows;
    expect(c.rooflineUs).toBeCloseTo((2 * 4096 ** 3) / (66.9e12 / 1e6), 6); // compute-bound: 2.05 ms
    expect(c.intensity).toBeCloseTo((2 * 4096 ** 3) / (4 * 3 * 4096 * 4096), 9);
    expect(m.rooflineUs).toBeCloseTo((4 * (4096 + 4096 * 4096 + 4096)) / (3.35e12 / 1e6), 6); // memory-bound
    expect(c.invocations).toBe(4096 * 64);
    expect(r.totals.rooflineMs).toBeCloseTo((c.rooflineUs + m.rooflineUs) / 1e3, 9);
    expect(r.totals.rooflineTokensPerS).toBeCloseTo(1000 / (r.totals.rooflineMs / 1e3), 6);
    expect(r.totals.flops).toBe(c.flops + m.flops);
  });

  it('the flag: fewer than 4 × SMs workgroups whose idle SMs cost more than a launch; below a launch of work, launch-bound', () => {
    const ctx = { B: 1, dk: 64, dv: 64, t: 0 };
    const edge = FILL_FACTOR * H100.sms;
    // 1024³ takes 32 µs at the H100's peak: with 131 workgroups one SM idles (0.25 µs), with 100 a quarter (10 µs).
    const big = (label: string, wg: number) => matmul(label, 1024, 1024, 1024, wg);
    const r = stepReport(
      'train',
      1,
      [big('under', 100), big('near', edge - 1), big('full', edge), matmul('one', 64, 64, 64, 1), big('slightly', H100.sms - 1)],
      ctx,
      H100,
    );
    expect(r.rows.map((x) => x.underfilled)).toEqual([true, false, false, false, false]);
    expect(r.rows.map((x) => x.launchBound)).toEqual([false, false, false, true, false]);
    expect(r.totals.underfilled).toBe(1);
    expect(r.totals.smallLaunchBound).toBe(1);
    expect(r.rows[2].fillUs).toBe(r.rows[2].rooflineUs);
    expect(r.rows[0].fillUs).toBeCloseTo((r.rows[0].rooflineUs * H100.sms) / 100, 9);
    expect(r.rows[3].fillUs).toBeCloseTo(r.rows[3].rooflineUs * H100.sms, 9);
    expect(r.rows[4].fillUs - r.rows[4].rooflineUs).toBeLessThan(LAUNCH_US);
    // Every dispatch costs at least a launch.
    expect(r.totals.launchMs).toBeCloseTo(r.rows.reduce((a, x) => a + Math.max(x.fillUs, LAUNCH_US), 0) / 1e3, 12);
    // A dispatch of zero workgroups (skipped when encoded) is not listed.
    expect(stepReport('train', 1, [matmul('none', 64, 64, 64, 0)], ctx, H100).rows).toEqual([]);
    expect(FILL_FACTOR * GPU_SPECS.m2.sms).toBe(40);
  });

  it('keys per query: ncmp and the selected keys with the current block partial', () => {
    expect([0, 6, 7, 8, 11].map((t) => ncmp(t, 8, 4))).toEqual([0, 0, 1, 1, 2]);
    expect(selectedKeys(5, 8, 4, 1)).toBe(6); // t + 1
    expect(selectedKeys(45, 8, 4, 1)).toBe(3 * 8 + 6); // 3 full blocks and the current one's 6 keys
    expect(selectedKeys(45, 8, 4, 0)).toBe(32);
  });

  it('workgroup sizes from the WGSL, override constants applied; an unknown kernel is an error', () => {
    const code = 'override WGX: u32 = 8;\nconst L: u32 = 32u;\n@compute @workgroup_size(WGX, 256 / L)\nfn main() {}\n';
    expect(workgroupSizeOf(code, 'main', {})).toEqual([8, 8, 1]);
    expect(workgroupSizeOf(code, 'main', { WGX: 16 })).toEqual([16, 8, 1]);
    expect(evalWgslInt('4u * (R + 1) - 2', () => 3)).toBe(14);
    const x = { ...matmul('m', 1, 1, 1, 1), kernel: 'mystery', entryPoint: 'main' };
    expect(() => dispatchCost(x, { B: 1, dk: 1, dv: 1, t: 0 })).toThrow(/no cost model for kernel mystery\.main/);
  });
});

describe('matmul split over K: the choice from the shape and the SM count', () => {
  it('SMs: set on the adapter, else a known name, else the default; none on a software adapter', () => {
    expect(computeUnits({ ...NVIDIA_ADAPTER, computeUnits: 108 })).toBe(108);
    expect(computeUnits({ ...NVIDIA_ADAPTER, description: 'NVIDIA H100 80GB HBM3' })).toBe(132);
    expect(computeUnits({ ...NVIDIA_ADAPTER, device: 'NVIDIA GeForce RTX 3090' })).toBe(82);
    expect(computeUnits(NVIDIA_ADAPTER)).toBe(DEFAULT_COMPUTE_UNITS);
    expect(fillTarget({ ...NVIDIA_ADAPTER, software: true, computeUnits: 132 })).toBe(0);
    expect(fillTarget({ ...NVIDIA_ADAPTER, computeUnits: 132 })).toBe(FILL_FACTOR * 132);
  });

  it('long K over a small output splits to the fill target; short K, a full grid or a software adapter does not', () => {
    const target = FILL_FACTOR * H100.sms;
    const big = 1 << 30;
    const t = TILING_GPU_SMALL;
    // The LM head's input gradient (K = vocabulary) and a key projection's weight gradient (K = B·T).
    for (const [M, N, K] of [
      [1024, 768, 50257],
      [768, 128, 1024],
      [1024, 36, 768],
    ]) {
      const s = matmulSplitPlan(t, M, N, K, target, big);
      const tiles = matmulTiles(t, M, N);
      expect(s.splits * tiles, `${M}×${N}×${K}`).toBeGreaterThanOrEqual(target);
      expect(s.splits).toBeLessThanOrEqual(Math.ceil(target / tiles) + 1); // about the fewest chunks that fill
      expect(s.kChunk).toBeGreaterThanOrEqual(t.TK);
      expect(s.splits).toBe(Math.ceil(K / s.kChunk));
    }
    expect(matmulSplitPlan(t, 1024, 768, 50257, target, big).splits).toBe(3);
    // A 128-long K into a 1024 × 768 gradient (accumulated): the partial sums cost more than the idle SMs.
    expect(matmulSplitPlan(t, 1024, 768, 128, target, big, true).splits).toBe(1);
    expect(matmulSplitPlan(TILING_GPU_LARGE, 4096, 4096, 4096, target, big).splits).toBe(1);
    expect(matmulSplitPlan(t, 768, 128, 1024, 0, big).splits).toBe(1);
    // The scratch bounds the chunks: [splits, M, N] floats.
    expect(matmulSplitPlan(t, 768, 128, 1024, target, 5 * 768 * 128).splits).toBe(5);
    expect(matmulSplitPlan(t, 768, 128, 1024, target, 768 * 128).splits).toBe(1);
  });
});

describe('the optimizer over runs of the parameter arena (paramRuns)', () => {
  it('m7c-125m: decayed tensors then the rest, each one run covering its tensors and only padding between', () => {
    for (const attention of ['dense', 'nsa'] as const) {
      const config = { ...preset('m7c-125m').model, attention };
      const { tensors } = createLayoutArena(new RecordingGpu().gpu, 'params', paramLayout(config));
      const runs = paramRuns(tensors, true);
      expect(runs.map((r) => r.decay)).toEqual([true, false]);
      expect(paramRuns(tensors, false)).toHaveLength(1);
      for (const t of tensors.all) {
        const r = runs.find((x) => x.decay === t.spec.decay)!;
        expect(t.slice.buffer).toBe(r.slice.buffer);
        expect(t.slice.offset).toBeGreaterThanOrEqual(r.slice.offset);
        expect(t.slice.offset + 4 * numel(t.spec.shape)).toBeLessThanOrEqual(r.slice.offset + r.slice.size);
      }
      // Floats of a run not in any of its tensors: under 64 (one alignment gap) per tensor.
      for (const r of runs) {
        const inside = tensors.all.filter((t) => t.spec.decay === r.decay).reduce((a, t) => a + numel(t.spec.shape), 0);
        const count = tensors.all.filter((t) => t.spec.decay === r.decay).length;
        expect(r.floats - inside).toBeGreaterThanOrEqual(0);
        expect(r.floats - inside).toBeLessThan(64 * count);
      }
    }
  });

  it('m7c-125m NSA step: 2 AdamW dispatches and one gradient-norm range of 3,565 partials', async () => {
    const steps = await recordSteps(preset('m7c-125m'), H100);
    expect(steps.train.filter((d) => d.kernel === 'adamw').map((d) => d.uniforms.P.decay)).toEqual([1, 0]);
    const norm = steps.train.filter((d) => d.kernel === 'gradnorm');
    expect(norm.map((d) => [d.entryPoint, d.workgroups[0] * d.workgroups[1]])).toEqual([
      ['partial', 3565],
      ['finalize', 1],
    ]);
  });

  it('issue 25: on an H100 no dispatch of m7c-125m’s NSA training or decode step is under-filled', async () => {
    const { train, decode } = planReports(await recordSteps(preset('m7c-125m'), H100), H100);
    expect(train.rows.filter((x) => x.underfilled).map((x) => x.label)).toEqual([]);
    expect(decode.rows.filter((x) => x.underfilled).map((x) => x.label)).toEqual([]);
    // The decode step is launch-bound: nearly all its dispatches finish within a launch.
    expect(decode.totals.launchMs).toBeGreaterThan(2 * decode.totals.fillMs);
  });

  it('issue 25, the selection split: at T = 32k its dot products fill an H100 (768 workgroups, not 2), none of its dispatches flagged', async () => {
    const { decode } = planReports(await recordSteps(preset('m7c-125m'), H100, 1, 32768), H100);
    expect(decode.position).toBe(32767);
    const select = decode.rows.filter((x) => x.label.startsWith('decode L0 select'));
    // B·H·Nmax = 12 × 2,047 dot products, 32 a workgroup; a softmax per head; the blocks and top-n per group.
    expect(select.map((x) => [x.label, x.workgroups])).toEqual([
      ['decode L0 select dots', 768],
      ['decode L0 select softmax', 12],
      ['decode L0 select blocks', 2],
    ]);
    expect(select[0].workgroups).toBeGreaterThanOrEqual(FILL_FACTOR * H100.sms);
    expect(decode.rows.filter((x) => x.underfilled).map((x) => x.label)).toEqual([]);
  });

  it('issue 25, fewer dispatches: m7c-125m decodes in 25 dispatches per NSA layer (42 before; the selection is 3) and 14 per dense layer (21)', async () => {
    for (const [attention, perLayer] of [
      ['nsa', 25],
      ['dense', 14],
    ] as const) {
      const run = structuredClone(preset('m7c-125m'));
      run.model.attention = attention;
      const { decode } = planReports(await recordSteps(run, H100), H100);
      // The embedding, the final RMSNorm and the LM head's part and combine around the layers.
      expect(decode.rows.length, attention).toBe(4 + run.model.nLayers * perLayer);
    }
    // One product group for q, the three branches' K/V and the gate logits, one append for the
    // three KV sets, w1 and w3 with the SwiGLU in their combine.
    const { decode } = planReports(await recordSteps(preset('m7c-125m'), H100), H100);
    expect(decode.rows.map((x) => x.label).filter((l) => l.startsWith('decode L1 '))).toEqual(
      [
        'q k v gates part',
        'q k v gates combine',
        'rope q',
        'append kv',
        'compress k',
        'compress v',
        'select dots',
        'select softmax',
        'select blocks',
        ...['cmp', 'sel', 'win'].flatMap((b) => [`attend ${b} part`, `attend ${b} combine`]),
        'o part',
        'o combine',
        'w1 w3 swiglu part',
        'w1 w3 swiglu combine',
        'w2 part',
        'w2 combine',
      ].map((l) => `decode L1 ${l}`),
    );
  });
});

describe('the presets on the recording device', () => {
  it('every dispatch of m7c-125m and long (dense and NSA), training and decode, has a cost; m7c-125m’s decode attention fills an H100', async () => {
    for (const base of [preset('m7c-125m'), longPreset()]) {
      for (const attention of ['dense', 'nsa'] as const) {
        const run = structuredClone(base);
        run.model.attention = attention;
        const steps = await recordSteps(run, H100);
        const { train, decode } = planReports(steps, H100);
        expect(train.rows.length).toBeGreaterThan(100);
        expect(train.tokens).toBe(run.train.batchSize * run.model.seqLen);
        for (const r of [train, decode])
          expect(r.rows.every((x) => x.flops >= 0 && x.bytes > 0 && Number.isFinite(x.rooflineUs))).toBe(true);
        if (run.model.nHeads !== 12) continue;
        // m7c-125m: the split attention's part dispatches fill an H100 (≥ 4 × 132 workgroups) in
        // every branch but the compressed one (63 keys).
        const parts = decode.rows.filter((x) => x.kernel === 'decode.attend.attendPart' && !/ cmp /.test(x.label));
        expect(parts.length).toBe(attention === 'dense' ? run.model.nLayers : 2 * run.model.nLayers);
        for (const p of parts) expect(p.underfilled, p.label).toBe(false);
        // The products split over K fill an H100: the LM head's input gradient and the key/value
        // weight gradients (K = B·T), each followed by its sum.
        for (const name of ['lm_head.dx', 'l0.dk.dw', 'l0.dv.dw']) {
          const label = attention === 'nsa' ? name.replace(/d([kv])\.dw/, 'd$1_sel.dw') : name;
          const i = train.rows.findIndex((x) => x.label === label);
          expect(train.rows[i], label).toMatchObject({ kernel: 'matmul.matmul', underfilled: false });
          expect(train.rows[i + 1]).toMatchObject({ label: `${label}.sum`, kernel: 'matmul.splitSum' });
        }
      }
    }
  });
});

describe('gpu:plan flags', () => {
  const usage = (argv: string[]): UsageError => {
    try {
      gpuPlanOptions(argv);
    } catch (e) {
      expect(e).toBeInstanceOf(UsageError);
      return e as UsageError;
    }
    throw new Error('expected a UsageError');
  };

  it('defaults: h100, both presets, each preset’s attention', () => {
    expect(gpuPlanOptions([])).toMatchObject({ gpu: 'h100', presets: ['m7c-125m', 'long'], attention: undefined, summary: false });
    expect(gpuPlanOptions(['--gpu', 'm2', '--preset', 'long', '--attention', 'dense,nsa', '--summary'])).toMatchObject({
      gpu: 'm2',
      presets: ['long'],
      attention: ['dense', 'nsa'],
      summary: true,
    });
  });

  it('--decode-T: context lengths, each an integer ≥ 1', () => {
    expect(gpuPlanOptions([]).decodeT).toBeUndefined();
    expect(gpuPlanOptions(['--decode-T', '4096,32768']).decodeT).toEqual([4096, 32768]);
    const bad = usage(['--decode-T', '4k']);
    expect([bad.flag, bad.message]).toEqual(['decode-T', "--decode-T: '4k' is not an integer ≥ 1 (a context length)"]);
  });

  it('a bad --gpu, --preset or --attention is refused naming the flag', () => {
    const g = usage(['--gpu', 'h800']);
    expect([g.flag, g.message]).toEqual(['gpu', "--gpu: unknown GPU 'h800' (known: h100, h200, a100, rtx3090, m2)"]);
    const p = usage(['--preset', 'm7c-125m,tiny']);
    expect([p.flag, p.message]).toEqual(['preset', "--preset: unknown value 'tiny' (known: m7c-125m, long)"]);
    expect(usage(['--attention', 'sparse']).flag).toBe('attention');
    expect(usage(['--gpus', 'h100']).message).toMatch(/^unknown flag --gpus \(did you mean --gpu\?\)/);
  });
});
