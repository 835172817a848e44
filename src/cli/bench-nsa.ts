// npm run bench:attention [-- --T 1024,2048 --repeats 3 --warmup 1]   (defaults: T = 1024 once on
// SwiftShader; T = 1k … 16k, 2 warm-up + 5 timed rounds elsewhere); npm run bench:nsa is the same.
// NSA attention against dense flash attention, training fwd+bwd (src/bench/train-bench.ts), with
// the sliding window, MoBA and DSA beside them at NSA's budget (src/bench/mechanism-bench.ts;
// --mechanisms picks them, none for the NSA/dense pair alone)
// and, with --decode, decode per token (decode-bench.ts: one step at position T − 1 on the GPU
// decoder; --train adds the training lines before them, --layers sets the decode model's layers),
// on one adapter in one run, as JSON lines. Every T is checked against the adapter's buffer and
// binding limits before anything is allocated. A closing 'summary' line gives the crossover T of
// training and of decode (where NSA becomes faster than dense) and decode's growth. The page's
// benchmark view runs the same code (src/bench/run-bench.ts) in its worker.
import { resolveBenchNsa } from '../bench/bench-sizes';
import { runNsaBench } from '../bench/run-bench';
import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { assertBenchSizes, BENCH_NSA_USAGE, benchNsaOptions } from './bench-nsa-options';
import { runMain } from './main';

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help')) {
    console.log(
      `${BENCH_NSA_USAGE}\n  NSA attention against dense flash attention on this adapter, as JSON lines: training fwd+bwd per T, with the\n  window, MoBA and DSA at NSA's budget (--mechanisms); with --decode decode per token (--train adds the training\n  lines, --layers the decode model's layers).`,
    );
    return 0;
  }
  const opts = benchNsaOptions(argv);
  const gpu = await acquireNodeGpu({ announce: false });
  const o = resolveBenchNsa(opts, gpu.adapter.software);
  // Before anything is allocated: every T against this adapter's buffer and binding limits.
  assertBenchSizes(o, {
    maxBufferSize: gpu.device.limits.maxBufferSize,
    maxStorageBufferBindingSize: gpu.device.limits.maxStorageBufferBindingSize,
    source: `this adapter (${describeAdapter(gpu.adapter)})`,
  });
  await runNsaBench(gpu, o, (line) => console.log(JSON.stringify(line)));
  gpu.destroy();
  return 0;
}

runMain(main);
