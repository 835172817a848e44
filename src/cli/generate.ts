// npm run generate -- --run <run> --prompt "text" [--tokens N --temperature X --top-k K --top-p P --seed S --cpu]
// Loads runs/<run>'s checkpoint and continues the prompt on the GPU decoder (--cpu: the float64 CPU decoder).
import { runGenerateCli } from './generate-cli';
import { nodeGpuDecoder } from './gpu-decoder-node';
import { runMain } from './main';

runMain(() =>
  runGenerateCli(
    process.argv.slice(2),
    {
      out: (line) => console.log(line),
      err: (line) => console.error(line),
    },
    nodeGpuDecoder,
  ),
);
