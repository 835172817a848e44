// npm run bench [-- --presets tiny,small --steps 10 --matmul 256,512,1024]
// Prints JSON lines: the adapter, matmul GFLOP/s per size, ms/step and tokens/s per preset, and
// per-kernel GPU time from timestamp queries where the adapter has them.
import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { profileDispatches, timingsByKernel } from '../gpu/profiler';
import { benchMatmul } from '../kernels/matmul-bench';
import { PRESET_NAMES, preset, type PresetName } from '../model/presets';
import { countParams } from '../model/params';
import { createDataset } from '../train/datasets';
import { Trainer } from '../train/trainer';
import { intFlag, parseArgs } from './args';

const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const presets = (args.flags.get('presets') ?? 'tiny,small').split(',').filter(Boolean) as PresetName[];
  for (const p of presets) if (!PRESET_NAMES.includes(p)) throw new Error(`--presets: unknown preset '${p}'`);
  const sizes = (args.flags.get('matmul') ?? '256,512,1024').split(',').filter(Boolean).map(Number);
  const steps = intFlag(args, 'steps') ?? 10;
  const gpu = await acquireNodeGpu({ announce: false });
  out({ kind: 'adapter', adapter: describeAdapter(gpu.adapter), architecture: gpu.adapter.architecture, software: gpu.adapter.software, timestamps: gpu.hasTimestamps });

  for (const r of await benchMatmul(gpu, sizes.map((n) => ({ M: n, N: n, K: n })))) out({ kind: 'matmul', ...r });

  for (const name of presets) {
    const cfg = preset(name);
    cfg.data.source = 'random';
    cfg.train.steps = steps + 3;
    const dataset = createDataset({ kind: 'random', vocabSize: cfg.model.vocabSize }, { batchSize: cfg.train.batchSize, seqLen: cfg.model.seqLen, seed: 1 });
    const trainer = await Trainer.create(gpu, cfg, dataset);
    for (let i = 0; i < 3; i++) await trainer.step(); // warm-up: pipelines, caches
    await trainer.flush();
    const t0 = performance.now();
    for (let i = 0; i < steps; i++) await trainer.step();
    await trainer.flush();
    const ms = (performance.now() - t0) / steps;
    out({
      kind: 'preset',
      preset: name,
      attention: cfg.model.attention,
      params: countParams(cfg.model),
      tokens_per_step: trainer.tokensPerStep,
      ms_per_step: ms,
      tokens_per_s: trainer.tokensPerStep / (ms / 1000),
      gpu_mib: trainer.gpuBytes / 2 ** 20,
    });
    if (gpu.hasTimestamps) {
      const plan = trainer.plan;
      const timings = await profileDispatches(gpu, [...plan.microSteps[0], ...plan.optimizer]);
      const total = timings.reduce((a, t) => a + t.ms, 0);
      out({ kind: 'kernels', preset: name, total_gpu_ms: total, kernels: timingsByKernel(timings).map((k) => ({ ...k, share: k.ms / total })) });
    }
    trainer.destroy();
  }
  gpu.destroy();
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
    process.exit(1);
  },
);
