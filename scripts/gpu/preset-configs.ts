// The bench step's model and batch for each preset × attention, as `kind: 'preset'` lines without
// our timing (tokens_per_s null), for scripts/gpu/torch_bench.py when there is no bench.jsonl —
// the WebGPU adapter failed or the bench step did not run — so the PyTorch figures still come.
// Needs no GPU. Usage: node scripts/run-node.mjs scripts/gpu/preset-configs.ts [--presets a,b] > configs.jsonl
import { torchBenchConfig } from '../../src/bench/torch-config';
import { preset, type PresetName } from '../../src/train/presets/presets';

const arg = process.argv.indexOf('--presets');
const names = arg >= 0 ? (process.argv[arg + 1] ?? '').split(',') : ['tiny', 'small', 'm7c-125m'];
for (const name of names)
  for (const attention of ['dense', 'nsa'] as const) {
    const cfg = preset(name as PresetName);
    cfg.model.attention = attention;
    console.log(JSON.stringify({ ...torchBenchConfig(name, cfg), tokens_per_s: null }));
  }
