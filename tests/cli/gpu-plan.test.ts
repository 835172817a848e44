// npm run gpu:plan's report (src/bench/gpu-plan.ts, src/bench/dispatch-cost.ts) and flags
// (src/cli/gpu-plan-options.ts), in process and without a GPU: the roofline arithmetic and the
// under-fill flag on hand-made dispatches, every dispatch of both presets' steps costed, the decode
// attention's split filling an H100, and bad --gpu / --preset / --attention values refused.
import { describe, expect, it } from 'vitest';

import { dispatchCost, ncmp, selectedKeys } from '../../src/bench/dispatch-cost';
import { FILL_FACTOR, GPU_SPECS, planReports, recordSteps, stepReport } from '../../src/bench/gpu-plan';
import { gpuPlanOptions } from '../../src/cli/gpu-plan-options';
import { UsageError } from '../../src/cli/usage';
import type { RecordedDispatch } from '../../src/gpu/recording-device';
import { evalWgslInt, workgroupSizeOf } from '../../src/gpu/recording-device';
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

  it('the flag: fewer than 4 × SMs workgroups; the fill-limited time divides by the share of SMs used', () => {
    const ctx = { B: 1, dk: 64, dv: 64, t: 0 };
    const edge = FILL_FACTOR * H100.sms;
    const r = stepReport(
      'train',
      1,
      [matmul('under', 64, 64, 64, edge - 1), matmul('full', 64, 64, 64, edge), matmul('one', 64, 64, 64, 1)],
      ctx,
      H100,
    );
    expect(r.rows.map((x) => x.underfilled)).toEqual([true, false, true]);
    expect(r.totals.underfilled).toBe(2);
    expect(r.rows[1].fillUs).toBe(r.rows[1].rooflineUs);
    expect(r.rows[2].fillUs).toBeCloseTo(r.rows[2].rooflineUs * H100.sms, 9);
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

describe('the presets on the recording device', () => {
  it('every dispatch of m7c-125m and long (dense and NSA), training and decode, has a cost; m7c-125m’s decode attention fills an H100', async () => {
    for (const base of [preset('m7c-125m'), longPreset()]) {
      for (const attention of ['dense', 'nsa'] as const) {
        const run = structuredClone(base);
        run.model.attention = attention;
        const steps = await recordSteps(run);
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

  it('a bad --gpu, --preset or --attention is refused naming the flag', () => {
    const g = usage(['--gpu', 'h800']);
    expect([g.flag, g.message]).toEqual(['gpu', "--gpu: unknown GPU 'h800' (known: h100, h200, a100, rtx3090, m2)"]);
    const p = usage(['--preset', 'm7c-125m,tiny']);
    expect([p.flag, p.message]).toEqual(['preset', "--preset: unknown value 'tiny' (known: m7c-125m, long)"]);
    expect(usage(['--attention', 'sparse']).flag).toBe('attention');
    expect(usage(['--gpus', 'h100']).message).toMatch(/^unknown flag --gpus \(did you mean --gpu\?\)/);
  });
});
