// npm run gpu:adapter: prints the adapter Dawn gives this process as one JSON object (vendor,
// architecture, description, software, features, limits) and a one-line summary on stderr. With
// NSA_GPU=hardware (the offline GPU bundle) a software adapter is an error, exit 1.
import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { parseArgs } from './args';
import { knownFp32Peak } from './fp32-peak';
import { runMain } from './main';

const USAGE = 'usage: npm run gpu:adapter   (prints the WebGPU adapter as JSON; NSA_GPU=hardware|software|auto)';

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), { values: [], booleans: ['help'], usage: USAGE });
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  const gpu = await acquireNodeGpu({ announce: false });
  const a = gpu.adapter;
  console.error(`[gpu] adapter: ${describeAdapter(a)}`);
  console.log(
    JSON.stringify(
      {
        summary: describeAdapter(a),
        ...a,
        timestamps: gpu.hasTimestamps,
        fp32_peak: knownFp32Peak(`${a.description} ${a.device}`),
        node: process.version,
        date: new Date().toISOString(),
      },
      null,
      2,
    ),
  );
  gpu.destroy();
  return 0;
}

runMain(main);
