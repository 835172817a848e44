// kill -9 at random moments (issue 22's campaign): `npm run train` on the tiny preset, checkpointing
// every 2 steps, is SIGKILLed at a random time in each trial (a third of the trials exactly inside a
// checkpoint write, through NSA_TEST_KILL_DURING_CHECKPOINT), then resumed — or restarted, when the
// kill came before the first checkpoint — until it finishes, killed again at random on the way in
// some trials. Every trial must end with the uninterrupted run's weights and AdamW moments bit for
// bit, one metrics.csv row per step, no temporary file and no run.lock left, and no corrupt or
// non-finite checkpoint ever accepted (a refusal would stop the trial). The metrics.csv steps are
// checked 1 … 12 or 0 … 11, whichever the uninterrupted run wrote. Run:
//   node scripts/run-node.mjs scripts/campaigns/kill9.ts [--trials 12] [--seed 1] [--out FILE]
// Prints one JSON line per trial and a summary; exits 1 if any trial failed.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { processAlive } from '../../src/cli/run-lock';
import { decodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { mulberry32 } from '../../src/util/random';

const option = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const TRIALS = Number(option('trials', '12'));
const SEED = Number(option('seed', '1'));
const OUT = option('out', '');
const STEPS = 12;
const RUN = [
  '--preset',
  'tiny',
  '--data',
  'random',
  '--steps',
  String(STEPS),
  '--batch',
  '2',
  '--eval-every',
  '0',
  '--log-every',
  '1',
  '--checkpoint-every',
  '2',
];

const root = mkdtempSync(join(tmpdir(), 'nsa-kill9-'));
const r = mulberry32(SEED);

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  ms: number;
}

/** One train process; killAfterMs: SIGKILL it then (if still running). */
function train(args: string[], killAfterMs?: number, env: Record<string, string> = {}): Promise<Exit> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    // Its own process group, killed whole: scripts/run-node.mjs starts the trainer as a child, and
    // SIGKILL to the wrapper alone would leave the trainer running (the lock then names it).
    const child = spawn(process.execPath, ['scripts/run-node.mjs', 'src/cli/train.ts', ...args], {
      env: { ...process.env, NSA_GPU: 'software', ...env },
      detached: true,
    });
    const killAll = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const timer = killAfterMs === undefined ? undefined : setTimeout(killAll, killAfterMs);
    const hang = setTimeout(killAll, 600_000);
    // 'close', not 'exit': after the output pipes are drained.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(hang);
      resolve({ code, signal, stderr, ms: performance.now() - t0 });
    });
  });
}

/** The checkpoint's tensors (weights, moments, state), as bytes; throws on anything it refuses. */
function tensorBytes(dir: string): Buffer {
  const c = decodeCheckpoint(readFileSync(join(dir, 'checkpoint.safetensors')), { file: dir });
  return Buffer.concat(
    [c.params, c.adamM, c.adamV].flatMap((m) => [...m.values()].map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))),
  );
}

function metricSteps(dir: string): number[] {
  const [header, ...rows] = readFileSync(join(dir, 'metrics.csv'), 'utf8').trim().split('\n');
  const col = header.split(',').indexOf('step');
  return rows.map((row) => Number(row.split(',')[col]));
}

/** After a kill, until the lock's holder has exited (a SIGKILLed trainer takes a moment to die). */
async function holderGone(dir: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    let pid: number;
    try {
      pid = (JSON.parse(readFileSync(join(dir, 'run.lock'), 'utf8')) as { pid: number }).pid;
    } catch {
      return; // no lock, or a torn one (taken over)
    }
    if (!processAlive(pid)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  const ref = await train([...RUN, '--out', root, '--run', 'reference']);
  if (ref.code !== 0) throw new Error(`the uninterrupted run failed: ${ref.stderr}`);
  const want = tensorBytes(join(root, 'reference'));
  const wantSteps = metricSteps(join(root, 'reference')).join(' ');
  const results: Array<Record<string, unknown>> = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    const name = `trial-${trial}`;
    const dir = join(root, name);
    const during = trial % 3 === 2 ? String(1 + Math.floor(r() * (STEPS / 2 - 1))) : undefined;
    const kills: string[] = [];
    const problems: string[] = [];
    let finished = false;
    let first = true;
    for (let attempt = 0; attempt < 8 && !finished; attempt++) {
      const resume = existsSync(join(dir, 'checkpoint.safetensors'));
      const args = resume ? ['--resume', dir, '--checkpoint-every', '2'] : [...RUN, '--out', root, '--run', name];
      // The first attempt always dies; later ones die with probability 1/3, at a random moment.
      const kill = first || r() < 1 / 3 ? Math.floor(r() * ref.ms) : undefined;
      const env: Record<string, string> = first && during ? { NSA_TEST_KILL_DURING_CHECKPOINT: during } : {};
      const e = await train(args, first && during ? undefined : kill, env);
      first = false;
      if (e.signal === 'SIGKILL') {
        await holderGone(dir);
        kills.push(during && !resume && attempt === 0 ? `inside checkpoint ${during}` : `${kill} ms after ${resume ? 'resume' : 'start'}`);
        continue;
      }
      if (e.code !== 0) {
        problems.push(`exit ${e.code}: ${e.stderr.trim().split('\n').slice(-2).join(' | ')}`);
        break;
      }
      finished = true;
    }
    if (finished) {
      try {
        if (!tensorBytes(dir).equals(want)) problems.push('final weights and moments differ from the uninterrupted run');
      } catch (err) {
        problems.push(`final checkpoint refused: ${(err as Error).message}`);
      }
      const steps = metricSteps(dir);
      if (steps.join(' ') !== wantSteps) problems.push(`metrics.csv steps ${steps.join(' ')} instead of ${wantSteps}`);
      const left = readdirSync(dir).filter((f) => f.includes('.tmp-') || f === 'run.lock');
      if (left.length) problems.push(`left behind: ${left.join(', ')}`);
    } else if (!problems.length) problems.push('did not finish in 8 attempts');
    const line = { trial, kills, finished, problems };
    results.push(line);
    console.log(JSON.stringify(line));
  }
  const failed = results.filter((x) => (x.problems as string[]).length).length;
  const summary = {
    kind: 'summary',
    trials: TRIALS,
    kills: results.reduce((a, x) => a + (x.kills as string[]).length, 0),
    failed,
    seed: SEED,
    referenceMs: Math.round(ref.ms),
  };
  console.log(JSON.stringify(summary));
  if (OUT) writeFileSync(OUT, `${JSON.stringify({ summary, results }, null, 1)}\n`);
  rmSync(root, { recursive: true, force: true });
  process.exitCode = failed ? 1 : 0;
}

main().catch((e: unknown) => {
  console.error(e);
  rmSync(root, { recursive: true, force: true });
  process.exitCode = 1;
});
