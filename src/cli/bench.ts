// npm run bench [-- --presets tiny,small --steps 10 --matmul 256,512,1024 --attention nsa,dense]
// Prints JSON lines: the adapter (with its float32 peak when known, src/cli/fp32-peak.ts, or
// --peak-tflops), matmul GFLOP/s per size, the cost of one dispatch (a chain of dependent ones in a
// pass, src/kernels/dispatch-bench.ts), ms/step, tokens/s and model-FLOP utilisation per preset
// and attention (src/definitions/model-flops.ts), per-kernel GPU time from timestamp queries where the
// adapter has them, and, when --attention names two kinds, a comparison line per preset. A preset
// named name@B trains at batch size B (src/cli/bench-options.ts); every line carries batch_size.
import { torchBenchConfig } from '../bench/torch-config';
import { formatConfigIssues } from '../definitions/config-issue';
import { type AttentionKind } from '../definitions/model-config';
import { trainingFlopsPerStep } from '../definitions/model-flops';
import { countParams } from '../definitions/params';
import { LAUNCH_US } from '../gpu/compute-units';
import { describeAdapter, type GpuContext } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { profileDispatches, timingsByKernel } from '../gpu/profiler';
import { benchDispatch } from '../kernels/dispatch-bench';
import { benchMatmul } from '../kernels/matmul-bench';
import { type RunConfig, validateRunConfig } from '../train/config';
import { createDataset } from '../train/data/datasets';
import { trainSteps } from '../train/loop';
import { type PresetName } from '../train/presets/presets';
import { Trainer } from '../train/trainer';
import { BENCH_USAGE, benchOptions } from './bench-options';
import { knownFp32Peak } from './fp32-peak';
import { runMain } from './main';

const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

/** Trains `cfg` on random tokens for 3 warm-up and `steps` timed steps; prints its preset line (and kernels). */
async function benchPreset(gpu: GpuContext, name: PresetName, cfg: RunConfig, steps: number, peakTflops: number | null): Promise<number> {
  cfg.data.source = 'random';
  cfg.train.steps = steps + 3;
  const dataset = createDataset(
    { kind: 'random', vocabSize: cfg.model.vocabSize },
    { batchSize: cfg.train.batchSize, seqLen: cfg.model.seqLen, seed: 1 },
  );
  const trainer = await Trainer.create(gpu, cfg, dataset);
  await trainSteps(trainer, 3); // warm-up: pipelines, caches
  const t0 = performance.now();
  await trainSteps(trainer, 3 + steps);
  const ms = (performance.now() - t0) / steps;
  const tokensPerS = trainer.tokensPerStep / (ms / 1000);
  const attention = cfg.model.attention;
  const flopsPerStep = trainingFlopsPerStep(cfg.model, cfg.train.batchSize * cfg.train.gradAccum);
  const tflops = flopsPerStep / (ms / 1000) / 1e12;
  out({
    // The exact model and batch, so scripts/gpu/torch_bench.py can time the same configuration.
    ...torchBenchConfig(name, cfg),
    params: countParams(cfg.model),
    tokens_per_step: trainer.tokensPerStep,
    ms_per_step: ms,
    tokens_per_s: tokensPerS,
    gpu_mib: trainer.gpuBytes / 2 ** 20,
    model_tflop_per_step: flopsPerStep / 1e12,
    model_tflops: tflops,
    mfu: peakTflops ? tflops / peakTflops : null,
  });
  if (gpu.hasTimestamps) {
    const plan = trainer.plan;
    const timings = await profileDispatches(gpu, plan.stepDispatches());
    const total = timings.reduce((a, t) => a + t.ms, 0);
    out({
      kind: 'kernels',
      preset: name,
      attention,
      batch_size: cfg.train.batchSize,
      total_gpu_ms: total,
      kernels: timingsByKernel(timings).map((k) => ({ ...k, share: k.ms / total })),
    });
  }
  trainer.destroy();
  return tokensPerS;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    console.log(BENCH_USAGE);
    return 0;
  }
  const { sizes, steps, runs, peakTflops: peakFlag } = benchOptions(argv);
  // Every (preset, attention) config is checked before any GPU work.
  const errs = runs.flatMap((r) =>
    r.configs.flatMap((c) =>
      validateRunConfig(c).map((e) => ({ ...e, field: `${r.name}@${r.batchSize} ${c.model.attention}: ${e.field}` })),
    ),
  );
  if (errs.length) {
    console.error(`invalid configuration:\n${formatConfigIssues(errs)}`);
    return 2;
  }

  const gpu = await acquireNodeGpu({ announce: false });
  const known = knownFp32Peak(`${gpu.adapter.description} ${gpu.adapter.device}`);
  const peakTflops = peakFlag ?? known?.tflops ?? null;
  out({
    kind: 'adapter',
    adapter: describeAdapter(gpu.adapter),
    architecture: gpu.adapter.architecture,
    software: gpu.adapter.software,
    timestamps: gpu.hasTimestamps,
    fp32_peak_tflops: peakTflops,
    fp32_peak_source: peakFlag ? '--peak-tflops' : (known?.source ?? null),
  });

  for (const r of await benchMatmul(
    gpu,
    sizes.map((n) => ({ M: n, N: n, K: n })),
  ))
    out({ kind: 'matmul', ...r, mfu: peakTflops ? r.gflops / 1000 / peakTflops : null });
  // The per-dispatch cost npm run gpu:plan assumes (LAUNCH_US): measured on this device.
  const d = await benchDispatch(gpu);
  out({
    kind: 'dispatch',
    dispatches: d.dispatches,
    short_ms: d.shortMs,
    long_ms: d.longMs,
    us_per_dispatch: d.usPerDispatch,
    timer: d.timer,
    assumed_us: LAUNCH_US,
  });

  for (const { name, batchSize, configs } of runs) {
    const measured: Array<[AttentionKind, number]> = [];
    for (const cfg of configs) measured.push([cfg.model.attention, await benchPreset(gpu, name, cfg, steps, peakTflops)]);
    if (measured.length === 2) {
      const [[a, ta], [b, tb]] = measured;
      out({
        kind: 'attention_compare',
        preset: name,
        batch_size: batchSize,
        steps,
        tokens_per_s: { [a]: ta, [b]: tb },
        [`${a}_over_${b}`]: ta / tb,
      });
    }
  }
  gpu.destroy();
  return 0;
}

runMain(main);
