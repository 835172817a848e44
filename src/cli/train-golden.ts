// npm run train:golden -- [--presets tiny,small] [--attention dense,nsa] [--steps N] [--record|--record-missing]
//   [--out results.json]
// The `npm run train` golden: trains each preset × attention through the real CLI (a child process,
// fixed seed, brown corpus), reads the losses from its metrics.csv and compares them with
// tests/golden/train.json, whose entries are keyed by profile and adapter (src/util/golden-key.ts):
// a golden recorded on one adapter guards only that adapter. A run with no golden for this
// adapter fails (never passes unchecked) unless --record-missing records it; --record replaces.
// Prints one JSON line per run and writes them all to --out. Exit 1 on any mismatch or missing golden.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { acquireNodeGpu } from '../gpu/node-device';
import { goldenKey } from '../util/golden-key';
import { intFlag, parseArgs } from './args';
import { runMain } from './main';
import { ATTENTION_KINDS } from './run-config';
import { UsageError } from './usage';

const USAGE = `usage: npm run train:golden -- [--presets tiny,small] [--attention ${ATTENTION_KINDS.join(',')}] [--steps N]
  [--record | --record-missing] [--out FILE]
  --presets LIST     presets to train (default tiny,small)
  --attention LIST   attentions to train each preset with (default dense,nsa)
  --steps N          training steps per run (default 300)
  --record           record this adapter's goldens (replacing any) in tests/golden/train.json
  --record-missing   record the goldens this adapter lacks; compare the others
  --out FILE         also write the results as one JSON file`;

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const GOLDEN_FILE = join(REPO, 'tests', 'golden', 'train.json');

/**
 * Same bits on the same adapter and driver (no float atomics); another CPU under SwiftShader or
 * another driver of the same GPU architecture rounds float32 a little differently, and 300 steps
 * amplify that a little. A real regression (wrong gradient, data order, init) moves the loss by ≥ 0.01.
 */
const TOLERANCE = { software: 2e-3, hardware: 5e-3 };

interface GoldenEntry {
  /** The train CLI's arguments. */
  argv: string[];
  /** Loss at the first, middle and last logged step. */
  losses: Record<string, number>;
  /** Largest allowed |loss − golden| at each step. */
  tolerance: number;
  recorded: string;
}

type Outcome = 'match' | 'mismatch' | 'missing' | 'recorded';

function readGoldens(): Record<string, GoldenEntry> {
  return JSON.parse(readFileSync(GOLDEN_FILE, 'utf8')) as Record<string, GoldenEntry>;
}

/** Every logged (step, loss) of a run folder's metrics.csv, in order. */
function lossesFromCsv(file: string): Array<[number, number]> {
  const [header, ...rows] = readFileSync(file, 'utf8').trim().split('\n');
  const cols = header.split(',');
  const iStep = cols.indexOf('step');
  const iLoss = cols.indexOf('loss');
  if (iStep < 0 || iLoss < 0) throw new Error(`${file}: no step/loss columns in '${header}'`);
  return rows
    .map((r) => r.split(','))
    .filter((c) => c[iLoss] !== '')
    .map((c) => [Number(c[iStep]), Number(c[iLoss])] as [number, number]);
}

/** The first, middle and last logged losses, keyed by step. */
function checkpoints(losses: Array<[number, number]>): Record<string, number> {
  const picks = [losses[0], losses[Math.floor((losses.length - 1) / 2)], losses[losses.length - 1]];
  return Object.fromEntries(picks.map(([s, l]) => [String(s), l]));
}

/** Trains through the real CLI in a scratch folder; returns its logged losses. */
function trainThroughCli(argv: string[]): Array<[number, number]> {
  const out = mkdtempSync(join(tmpdir(), 'nsa-golden-'));
  try {
    const r = spawnSync(
      process.execPath,
      [join(REPO, 'scripts', 'run-node.mjs'), 'src/cli/train.ts', ...argv, '--out', out, '--run', 'golden'],
      { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'], env: process.env },
    );
    if (r.status !== 0) throw new Error(`npm run train -- ${argv.join(' ')} exited with ${r.status ?? r.signal}`);
    return lossesFromCsv(join(out, 'golden', 'metrics.csv'));
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function compare(run: Record<string, number>, golden: GoldenEntry): string[] {
  return Object.entries(golden.losses).flatMap(([step, want]) => {
    const got = run[step];
    if (got === undefined) return [`step ${step}: not logged by this run`];
    return Math.abs(got - want) <= golden.tolerance ? [] : [`step ${step}: loss ${got}, golden ${want} (±${golden.tolerance})`];
  });
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), {
    values: ['presets', 'attention', 'steps', 'out'],
    booleans: ['record', 'record-missing', 'help'],
    usage: USAGE,
  });
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  const presets = (args.flags.get('presets') ?? 'tiny,small').split(',').filter(Boolean);
  const attentions = (args.flags.get('attention') ?? 'dense,nsa').split(',').filter(Boolean);
  for (const a of attentions)
    if (!(ATTENTION_KINDS as readonly string[]).includes(a))
      throw new UsageError(`--attention: unknown kind '${a}'`, { flag: 'attention' });
  const steps = intFlag(args, 'steps') ?? 300;
  if (steps < 2) throw new UsageError(`--steps must be an integer ≥ 2 (got '${steps}')`, { flag: 'steps' });
  const record = args.flags.has('record');
  const recordMissing = args.flags.has('record-missing');

  // The adapter the child processes will get (same environment, same choice).
  const gpu = await acquireNodeGpu({ announce: false });
  const adapter = gpu.adapter;
  gpu.destroy();
  const tolerance = adapter.software ? TOLERANCE.software : TOLERANCE.hardware;

  const results: Array<Record<string, unknown>> = [];
  let failed = false;
  for (const preset of presets)
    for (const attention of attentions) {
      const argv = ['--preset', preset, '--attention', attention, '--steps', String(steps), '--data', 'brown', '--seed', '1'];
      const key = goldenKey(`train/${preset}-${attention}-${steps}`, adapter);
      const t0 = performance.now();
      const losses = checkpoints(trainThroughCli(argv));
      const seconds = (performance.now() - t0) / 1000;
      const goldens = readGoldens();
      const golden = goldens[key];
      let outcome: Outcome;
      let problems: string[] = [];
      if (record || (!golden && recordMissing)) {
        goldens[key] = {
          argv,
          losses,
          tolerance: golden?.tolerance ?? tolerance,
          recorded: `${new Date().toISOString()} on ${adapter.description || adapter.device || adapter.architecture}`,
        };
        writeFileSync(GOLDEN_FILE, JSON.stringify(goldens, null, 2) + '\n');
        outcome = 'recorded';
      } else if (!golden) {
        outcome = 'missing';
        problems = [`no golden for ${key} in tests/golden/train.json; record it with npm run train:golden -- --record-missing`];
      } else {
        problems = compare(losses, golden);
        outcome = problems.length ? 'mismatch' : 'match';
      }
      failed ||= outcome === 'missing' || outcome === 'mismatch';
      const line = { key, outcome, losses, golden: golden?.losses ?? null, problems, seconds, entry: goldens[key] ?? null };
      console.log(JSON.stringify(line));
      results.push(line);
    }
  const outFile = args.flags.get('out');
  if (outFile) writeFileSync(outFile, JSON.stringify({ adapter, results }, null, 2) + '\n');
  return failed ? 1 : 0;
}

runMain(main);
