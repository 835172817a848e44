// The compare command (entry point: src/cli/compare.ts). Prints the settings that differ between the runs and each run's final and best metrics, read
// from their checkpoints (runs/<run>/checkpoint.safetensors).
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { decodeCheckpoint } from '../train/checkpoint/checkpoint';
import { CHECKPOINT_FILE } from '../train/checkpoint/run-files';
import { type ComparedRun, compareRuns, formatComparison } from '../train/compare';
import { parseArgs } from './args';
import { escapeControl } from './terminal-text';
import { UsageError } from './usage';

const USAGE = 'usage: npm run compare -- runs/<a> runs/<b> [runs/<c> ...]';

export interface CompareIo {
  out(line: string): void;
}

export function runCompareCli(argv: readonly string[], io: CompareIo): number {
  const args = parseArgs(argv, { values: [], booleans: ['help'], positional: 'run folder', usage: USAGE });
  if (args.flags.has('help')) {
    io.out(USAGE);
    return 0;
  }
  if (args.positional.length < 2) throw new UsageError(`compare needs at least two run folders\n${USAGE}`, { flag: 'runs' });
  const runs: ComparedRun[] = args.positional.map((dir) => {
    const file = join(dir, CHECKPOINT_FILE);
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new UsageError(`cannot read ${file} (${(e as Error).message})`, { flag: 'runs', value: dir });
    }
    const c = decodeCheckpoint(bytes, { file });
    return { name: basename(dir), config: c.config, metrics: c.metrics, evals: c.evals };
  });
  // Names and settings come from the checkpoints: control characters escaped.
  for (const line of formatComparison(compareRuns(runs))) io.out(escapeControl(line));
  return 0;
}
