// npm run gpu:plan: the GPU-shape report of a training step and a decode step, without a GPU. The
// real plan (ModelPlan.build) and decoder (GpuDecoder.create) are built against the recording
// stand-in device (src/gpu/recording-device.ts, with an NVIDIA adapter's limits, so the kernels take
// their GPU variants), and every dispatch they record is listed with its workgroups, invocations,
// FLOPs and bytes (src/bench/dispatch-cost.ts), arithmetic intensity and a roofline time from the
// chosen GPU's published peaks; a dispatch with fewer workgroups than 4 × the GPU's SMs (cores) is
// flagged as under-filling it. Totals per step: roofline time and tokens/s, and the same with every
// under-filled dispatch slowed by the share of SMs it leaves idle.
import { GpuDecoder } from '../decode/gpu-decoder';
import type { ModelConfig } from '../definitions/model-config';
import { FILL_FACTOR, LAUNCH_US } from '../gpu/compute-units';
import { NVIDIA_ADAPTER, RecordingGpu } from '../gpu/recording-device';
import { ModelPlan } from '../model/plan';
import type { RunConfig } from '../train/config';
import { type CostContext, dispatchCost } from './dispatch-cost';

/**
 * Published peaks (vendors' data sheets): float32 without tensor cores at boost clock (FMA = 2
 * FLOPs), memory bandwidth, and the SM (Apple: GPU core) count a workgroup runs on.
 */
export interface GpuSpec {
  name: string;
  fp32Tflops: number;
  /** Memory bandwidth, TB/s (10¹² bytes per second). */
  bandwidthTBs: number;
  sms: number;
  source: string;
}

export const GPU_SPECS = {
  h100: {
    name: 'NVIDIA H100 SXM5',
    fp32Tflops: 66.9,
    bandwidthTBs: 3.35,
    sms: 132,
    source: 'NVIDIA H100 Tensor Core GPU data sheet (SXM5: 67 TFLOP/s FP32, 3.35 TB/s HBM3); 132 SMs (H100 architecture white paper)',
  },
  h200: {
    name: 'NVIDIA H200 SXM',
    fp32Tflops: 66.9,
    bandwidthTBs: 4.8,
    sms: 132,
    source:
      'NVIDIA H200 Tensor Core GPU data sheet (67 TFLOP/s FP32, 4.8 TB/s HBM3e); the H100 SXM5 die: 132 SMs. The GPU of the one run in docs/benchmarks.md',
  },
  a100: {
    name: 'NVIDIA A100 SXM4 40GB',
    fp32Tflops: 19.5,
    bandwidthTBs: 1.555,
    sms: 108,
    source: 'NVIDIA A100 data sheet (19.5 TFLOP/s FP32; 1,555 GB/s HBM2 for 40 GB, 2,039 GB/s for the 80 GB SXM); 108 SMs',
  },
  rtx3090: {
    name: 'NVIDIA GeForce RTX 3090',
    fp32Tflops: 35.6,
    bandwidthTBs: 0.936,
    sms: 82,
    source: 'NVIDIA Ampere GA102 white paper (RTX 3090: 35.6 TFLOP/s FP32, 936 GB/s GDDR6X, 82 SMs)',
  },
  m2: {
    name: 'Apple M2 (10-core GPU)',
    fp32Tflops: 3.6,
    bandwidthTBs: 0.1,
    sms: 10,
    source: 'Apple M2 announcement (10-core GPU, 3.6 TFLOP/s, 100 GB/s unified memory)',
  },
} as const satisfies Record<string, GpuSpec>;

export type GpuName = keyof typeof GPU_SPECS;
export const GPU_NAMES = Object.keys(GPU_SPECS) as GpuName[];

/** Workgroups per SM below which a dispatch is flagged: with fewer, some SMs idle or hold one workgroup. */
export { FILL_FACTOR };

export { LAUNCH_US };

export interface PlanRow {
  label: string;
  kernel: string;
  workgroups: number;
  invocations: number;
  flops: number;
  bytes: number;
  /** FLOPs per byte. */
  intensity: number;
  /** max(FLOPs / peak, bytes / bandwidth), µs. */
  rooflineUs: number;
  /** rooflineUs / min(1, workgroups / SMs): a workgroup runs on one SM, so fewer leave SMs idle. */
  fillUs: number;
  /** Fewer workgroups than FILL_FACTOR × SMs, and the SMs it leaves idle cost more than a launch (fillUs − rooflineUs > LAUNCH_US). */
  underfilled: boolean;
  /** Done within a launch even at its fill (fillUs ≤ LAUNCH_US): what it costs is the dispatch, whatever its workgroups. */
  launchBound: boolean;
}

export interface StepReport {
  step: 'train' | 'decode';
  /** Tokens the step processes (B·T for training, B for decode). */
  tokens: number;
  /** Decode: the position decoded. */
  position?: number;
  rows: PlanRow[];
  totals: {
    dispatches: number;
    flops: number;
    bytes: number;
    rooflineMs: number;
    rooflineTokensPerS: number;
    fillMs: number;
    fillTokensPerS: number;
    /** Σ max(fill-limited time, LAUNCH_US): every dispatch costs at least a launch. */
    launchMs: number;
    launchTokensPerS: number;
    underfilled: number;
    /** Dispatches with fewer than FILL_FACTOR × SMs workgroups that are launch-bound (not flagged). */
    smallLaunchBound: number;
  };
}

/** The rows and totals of one step's recorded dispatches on `gpu`. */
export function stepReport(
  step: 'train' | 'decode',
  tokens: number,
  dispatches: ReadonlyArray<ReturnType<RecordingGpu['describe']>>,
  ctx: CostContext,
  gpu: GpuSpec,
): StepReport {
  const threshold = FILL_FACTOR * gpu.sms;
  const rows = dispatches
    .filter((d) => d.workgroups[0] * d.workgroups[1] * d.workgroups[2] > 0)
    .map((d): PlanRow => {
      const { flops, bytes } = dispatchCost(d, ctx);
      const workgroups = d.workgroups[0] * d.workgroups[1] * d.workgroups[2];
      const invocations = workgroups * d.workgroupSize[0] * d.workgroupSize[1] * d.workgroupSize[2];
      const rooflineUs = Math.max(flops / (gpu.fp32Tflops * 1e6), bytes / (gpu.bandwidthTBs * 1e6));
      const fillUs = rooflineUs / Math.min(1, workgroups / gpu.sms);
      return {
        label: d.label,
        kernel: `${d.kernel}.${d.entryPoint}`,
        workgroups,
        invocations,
        flops,
        bytes,
        intensity: bytes > 0 ? flops / bytes : 0,
        rooflineUs,
        fillUs,
        underfilled: workgroups < threshold && fillUs - rooflineUs > LAUNCH_US,
        launchBound: fillUs <= LAUNCH_US,
      };
    });
  const sum = (f: (r: PlanRow) => number) => rows.reduce((s, r) => s + f(r), 0);
  const rooflineMs = sum((r) => r.rooflineUs) / 1e3;
  const fillMs = sum((r) => r.fillUs) / 1e3;
  const launchMs = sum((r) => Math.max(r.fillUs, LAUNCH_US)) / 1e3;
  return {
    step,
    tokens,
    position: step === 'decode' ? ctx.t : undefined,
    rows,
    totals: {
      dispatches: rows.length,
      flops: sum((r) => r.flops),
      bytes: sum((r) => r.bytes),
      rooflineMs,
      rooflineTokensPerS: tokens / (rooflineMs / 1e3),
      fillMs,
      fillTokensPerS: tokens / (fillMs / 1e3),
      launchMs,
      launchTokensPerS: tokens / (launchMs / 1e3),
      underfilled: rows.filter((r) => r.underfilled).length,
      smallLaunchBound: rows.filter((r) => r.launchBound && r.workgroups < threshold).length,
    },
  };
}

/** Under-filled rows grouped by kernel and label with the layer prefix dropped: label, count, workgroups, fill time. */
export function underfilledKernels(
  r: StepReport,
): Array<{ label: string; kernel: string; count: number; workgroups: number; fillUs: number }> {
  const m = new Map<string, { label: string; kernel: string; count: number; workgroups: number; fillUs: number }>();
  for (const row of r.rows) {
    if (!row.underfilled) continue;
    const label = row.label
      .replace(/^l\d+\./, '')
      .replace(/^decode L\d+ /, 'decode ')
      .replace(/\[\d+\]$/, '[·]');
    const k = `${label}|${row.workgroups}`;
    const e = m.get(k) ?? { label, kernel: row.kernel, count: 0, workgroups: row.workgroups, fillUs: 0 };
    e.count++;
    e.fillUs += row.fillUs;
    m.set(k, e);
  }
  return [...m.values()].sort((a, b) => b.fillUs - a.fillUs);
}

export interface RecordedSteps {
  config: ModelConfig;
  /** The decoder's model: config, or config at the context length decodeT. */
  decodeConfig: ModelConfig;
  batch: number;
  train: ReturnType<RecordingGpu['describe']>[];
  decode: ReturnType<RecordingGpu['describe']>[];
}

/**
 * One training step (one micro-batch's forward and backward, then the optimizer) and one decode
 * step of `run`'s model, recorded from the real plan and decoder built on the stand-in device,
 * which reports `gpu`'s SM count (the kernels that split work to fill the GPU size their splits by
 * it). Decode runs B = `decodeBatch` sequences with the cache at the model's context length, or at
 * `decodeT` positions (the same model with that context length: the decoder is sized by it).
 */
export async function recordSteps(run: RunConfig, gpu: GpuSpec, decodeBatch = 1, decodeT?: number): Promise<RecordedSteps> {
  const rec = new RecordingGpu({ ...NVIDIA_ADAPTER, computeUnits: gpu.sms });
  const t = run.train;
  const plan = await ModelPlan.build(rec.gpu, run.model, {
    batchSize: t.batchSize,
    gradAccum: 1,
    optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
  });
  const decodeConfig = decodeT === undefined ? run.model : { ...run.model, seqLen: decodeT };
  const decoder = await GpuDecoder.create(rec.gpu, decodeConfig, { batch: decodeBatch });
  return {
    config: run.model,
    decodeConfig,
    batch: t.batchSize,
    train: plan.stepDispatches().map((d) => rec.describe(d)),
    decode: decoder.dispatches.map((d) => rec.describe(d)),
  };
}

/** Both steps' reports on `gpu`; decode at the last position of the cache. */
export function planReports(s: RecordedSteps, gpu: GpuSpec, decodeBatch = 1): { train: StepReport; decode: StepReport } {
  const c = s.config;
  const base = { dk: c.dk, dv: c.dv };
  return {
    train: stepReport('train', s.batch * c.seqLen, s.train, { ...base, B: s.batch, t: c.seqLen - 1 }, gpu),
    decode: stepReport('decode', decodeBatch, s.decode, { ...base, B: decodeBatch, t: s.decodeConfig.seqLen - 1 }, gpu),
  };
}

const fmtNum = (x: number, digits = 3): string => (x === 0 ? '0' : x >= 1e4 || x < 1e-2 ? x.toExponential(2) : x.toPrecision(digits));

/** The report as text: a header, every dispatch (unless `summary`), the under-filled kernels and the totals. */
export function formatStepReport(title: string, r: StepReport, gpu: GpuSpec, summary: boolean): string {
  const lines: string[] = [];
  const where = r.step === 'decode' ? ` at position ${r.position}` : '';
  lines.push(`== ${title}: ${r.step} step (${r.tokens} tokens${where}) on ${gpu.name}`);
  if (!summary) {
    lines.push(['label', 'kernel', 'workgroups', 'invocations', 'FLOPs', 'bytes', 'FLOP/B', 'roofline µs', 'fill µs', 'flag'].join('\t'));
    for (const x of r.rows)
      lines.push(
        [
          x.label,
          x.kernel,
          x.workgroups,
          x.invocations,
          fmtNum(x.flops),
          fmtNum(x.bytes),
          fmtNum(x.intensity),
          fmtNum(x.rooflineUs),
          fmtNum(x.fillUs),
          x.underfilled ? `UNDER-FILLED (< ${FILL_FACTOR}×${gpu.sms})` : x.launchBound ? 'launch-bound' : '',
        ].join('\t'),
      );
  }
  const under = underfilledKernels(r);
  const lostUs = r.rows.reduce((s, x) => s + (x.fillUs - x.rooflineUs), 0);
  lines.push(
    `-- under-filled (fewer than ${FILL_FACTOR} × ${gpu.sms} = ${FILL_FACTOR * gpu.sms} workgroups, idle SMs costing more than a ${LAUNCH_US} µs launch): ${under.length} kernels, ${r.totals.underfilled} dispatches; ` +
      `idle SMs cost ${fmtNum(lostUs)} µs of the fill-limited ${fmtNum(r.totals.fillMs * 1e3)} µs`,
  );
  for (const u of under)
    lines.push(`   ${u.label} (${u.kernel}): ${u.workgroups} workgroups × ${u.count} dispatches, ${fmtNum(u.fillUs)} µs fill-limited`);
  const t = r.totals;
  const launchBound = r.rows.filter((x) => x.launchBound).length;
  lines.push(
    `-- launch-bound (done within a ${LAUNCH_US} µs launch even at their fill; ${t.smallLaunchBound} of them with fewer than ${FILL_FACTOR * gpu.sms} workgroups): ` +
      `${launchBound} of ${t.dispatches} dispatches; with every dispatch costing at least a launch the step takes ${fmtNum(t.launchMs)} ms ` +
      `(${Math.round(t.launchTokensPerS).toLocaleString('en-US')} tokens/s): fewer dispatches, not more workgroups, is what would speed it up`,
  );
  lines.push(
    `-- totals: ${t.dispatches} dispatches, ${fmtNum(t.flops)} FLOPs, ${fmtNum(t.bytes)} bytes; roofline ${fmtNum(t.rooflineMs)} ms ` +
      `(${Math.round(t.rooflineTokensPerS).toLocaleString('en-US')} tokens/s); fill-limited ${fmtNum(t.fillMs)} ms ` +
      `(${Math.round(t.fillTokensPerS).toLocaleString('en-US')} tokens/s)`,
  );
  return lines.join('\n');
}
