// npm run compare -- runs/a runs/b [...]: the settings that differ and each run's final and best metrics.
import { runCompareCli } from './compare-cli';
import { runMain } from './main';

runMain(() => runCompareCli(process.argv.slice(2), { out: (line) => console.log(line) }), { stack: false });
