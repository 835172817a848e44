// npm run gpu:plan: the GPU-shape report (src/bench/gpu-plan.ts) of one training step and one
// decode step of m7c-125m and the long-context preset on a named GPU's published peaks, without a
// GPU: the dispatches are recorded from the real plan and decoder on a stand-in device.
import { formatStepReport, GPU_SPECS, planReports, recordSteps } from '../bench/gpu-plan';
import { longPreset } from '../train/presets/long-preset';
import { preset } from '../train/presets/presets';
import { GPU_PLAN_USAGE, gpuPlanOptions, type PlanPreset } from './gpu-plan-options';
import { runMain } from './main';

const presetConfig = (name: PlanPreset) => (name === 'long' ? longPreset() : preset(name));

async function main(): Promise<number> {
  const o = gpuPlanOptions(process.argv.slice(2));
  if (o.help) {
    console.log(GPU_PLAN_USAGE);
    return 0;
  }
  const gpu = GPU_SPECS[o.gpu];
  if (!o.json) console.log(`# ${gpu.name}: ${gpu.fp32Tflops} TFLOP/s fp32, ${gpu.bandwidthTBs} TB/s, ${gpu.sms} SMs (${gpu.source})`);
  for (const name of o.presets) {
    const base = presetConfig(name);
    for (const attention of o.attention ?? [base.model.attention]) {
      const run = structuredClone(base);
      run.model.attention = attention;
      const title = `${name} (${attention}, batch ${run.train.batchSize} × T ${run.model.seqLen})`;
      // The training step once, then a decode step per --decode-T (or at the preset's own length).
      for (const [i, decodeT] of (o.decodeT ?? [undefined]).entries()) {
        const reports = planReports(await recordSteps(run, gpu, 1, decodeT), gpu);
        const decodeTitle = decodeT === undefined ? title : `${name} (${attention}, decode with T ${decodeT})`;
        for (const [r, t] of [...(i === 0 ? ([[reports.train, title]] as const) : []), [reports.decode, decodeTitle] as const]) {
          if (o.json) console.log(JSON.stringify({ preset: name, attention, gpu: o.gpu, ...r, rows: o.summary ? undefined : r.rows }));
          else console.log(`${formatStepReport(t, r, gpu, o.summary)}\n`);
        }
      }
    }
  }
  return 0;
}

runMain(main, { stack: false });
