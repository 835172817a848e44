// npm run generate -- --run <run> --prompt "text" [--tokens N --temperature X --top-k K --seed S]
// Loads runs/<run>'s checkpoint and continues the prompt on the CPU decoder (src/reference/decoder.ts).
import { runGenerateCli } from './generate-cli';
import { runMain } from './main';

runMain(() =>
  runGenerateCli(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  }),
);
