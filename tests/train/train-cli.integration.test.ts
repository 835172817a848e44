// npm run train end to end (child processes on Dawn): a run killed with SIGKILL while writing its
// second checkpoint leaves the first one loadable; --resume from it, and a run stopped by SIGTERM
// (the same handler as Ctrl-C's SIGINT, which the test runner's children do not receive) and resumed, both end with the metrics and weights of the uninterrupted run, bit for bit. A new
// run never reuses a folder, and a bad --resume is refused before any GPU work. The checkpoint is
// the run's one weight format: a finished run has no weights.json / weights.bin, and generate reads
// the checkpoint of a run killed mid-way.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { decodeCheckpoint } from '../../src/train/checkpoint/checkpoint';

const root = mkdtempSync(join(tmpdir(), 'nsa-train-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// The tiny dense preset on random tokens, 12 steps of 2 micro-batches.
const RUN = [
  '--preset',
  'tiny',
  '--data',
  'random',
  '--steps',
  '12',
  '--accum',
  '2',
  '--batch',
  '2',
  '--eval-every',
  '0',
  '--log-every',
  '1',
];
const train = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(
    process.execPath,
    ['scripts/run-node.mjs', 'src/cli/train.ts', ...(args.includes('--resume') ? [] : ['--out', root]), ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, ...env },
      timeout: 300_000,
    },
  );

/** metrics.csv without the timing columns (tokens/s, ms, elapsed differ between runs). */
function metricRows(run: string): string[] {
  const [header, ...rows] = readFileSync(join(root, run, 'metrics.csv'), 'utf8')
    .trim()
    .split('\n');
  const cols = header.split(',');
  const keep = cols.map((c, i) => (/tok|ms|elapsed/.test(c) ? -1 : i)).filter((i) => i >= 0);
  return rows.map((r) => keep.map((i) => r.split(',')[i]).join(','));
}

/** The run's final weights and AdamW moments: the tensors of its checkpoint.safetensors, as bytes. */
function weights(run: string): Buffer {
  const c = decodeCheckpoint(readFileSync(join(root, run, 'checkpoint.safetensors')), { file: run });
  return Buffer.concat(
    [c.params, c.adamM, c.adamV].flatMap((m) => [...m.values()].map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))),
  );
}

describe('npm run train: checkpoints and --resume', { timeout: 600_000 }, () => {
  it('uninterrupted run: checkpoints every 2 steps and the final one at 12', () => {
    const r = train([...RUN, '--run', 'whole', '--checkpoint-every', '2']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.match(/\[checkpoint\] step \d+ \((interval|final)\)/g)).toEqual([
      '[checkpoint] step 2 (interval)',
      '[checkpoint] step 4 (interval)',
      '[checkpoint] step 6 (interval)',
      '[checkpoint] step 8 (interval)',
      '[checkpoint] step 10 (interval)',
      '[checkpoint] step 12 (final)',
    ]);
    const c = decodeCheckpoint(readFileSync(join(root, 'whole', 'checkpoint.safetensors')), { file: 'whole' });
    expect([c.state.stepsDone, c.metrics.length, c.reason]).toEqual([12, 12, 'final']);
    // The checkpoint is the one weight format: no weights.json / weights.bin beside it.
    expect(readdirSync(join(root, 'whole')).sort()).toEqual([
      'checkpoint.safetensors',
      'config.json',
      'heartbeat.jsonl',
      'metrics.csv',
      'run-source.json',
      'summary.json',
    ]);
  });

  it('SIGKILL while writing the 2nd checkpoint: the 1st stays loadable; --resume ends bit-identical to the uninterrupted run', () => {
    const killed = train([...RUN, '--run', 'killed', '--checkpoint-every', '2'], { NSA_TEST_KILL_DURING_CHECKPOINT: '2' });
    expect(killed.signal).toBe('SIGKILL');
    expect(readdirSync(join(root, 'killed')).some((f) => f.includes('.tmp-'))).toBe(true); // the torn write stayed a temp file
    const c = decodeCheckpoint(readFileSync(join(root, 'killed', 'checkpoint.safetensors')), { file: 'killed' });
    expect([c.state.stepsDone, c.state.batchesDrawn, c.reason]).toEqual([2, 4, 'interval']);
    // Stopped mid-way, the folder's checkpoint is its weights: generate reads it.
    const gen = spawnSync(
      process.execPath,
      ['scripts/run-node.mjs', 'src/cli/generate.ts', '--cpu', '--runs-dir', root, '--run', 'killed', '--prompt', 'ab', '--tokens', '3'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(gen.status, gen.stderr).toBe(0);
    expect(gen.stdout).toContain(`[run] ${join(root, 'killed')} (checkpoint.safetensors, step 2)`);
    expect(gen.stdout).toMatch(/3 tokens after a 2-token prompt/);
    const resumed = train(['--resume', join(root, 'killed'), '--checkpoint-every', '2']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resumed at step 2');
    expect(metricRows('killed')).toEqual(metricRows('whole'));
    expect(weights('killed').equals(weights('whole'))).toBe(true);
  });

  it('SIGTERM mid-run writes a checkpoint and exits 143; --resume ends bit-identical to the uninterrupted run', async () => {
    const child = spawn(
      process.execPath,
      ['scripts/run-node.mjs', 'src/cli/train.ts', '--out', root, ...RUN, '--run', 'sigterm', '--checkpoint-every', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/step +3 \|/.test(out) && !child.killed) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((res) => child.on('close', (c, sig) => res(c ?? (sig === 'SIGTERM' ? 143 : null))));
    expect(code, out).toBe(143);
    expect(out).toMatch(/\[checkpoint\] step \d+ \(signal\)/);
    const c = decodeCheckpoint(readFileSync(join(root, 'sigterm', 'checkpoint.safetensors')), { file: 'sigterm' });
    expect(c.state.stepsDone).toBeGreaterThanOrEqual(4);
    expect(c.state.stepsDone).toBeLessThan(12);
    const resumed = train(['--resume', join(root, 'sigterm')]);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(metricRows('sigterm')).toEqual(metricRows('whole'));
    expect(weights('sigterm').equals(weights('whole'))).toBe(true);
  });

  it('refuses to reuse a run folder, and a --resume with config flags or without a checkpoint, before any GPU work', () => {
    const before = readFileSync(join(root, 'whole', 'metrics.csv'), 'utf8');
    const again = train([...RUN, '--run', 'whole']);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/whole already exists: continue it with --resume/);
    expect(readFileSync(join(root, 'whole', 'metrics.csv'), 'utf8')).toBe(before);
    const flags = train(['--resume', join(root, 'whole'), '--steps', '20']);
    expect(flags.status).toBe(2);
    expect(flags.stderr).toMatch(/configuration in its checkpoint; drop --steps/);
    const missing = train(['--resume', join(root, 'nope')]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read .*nope\/checkpoint\.safetensors/);
    expect(existsSync(join(root, 'nope'))).toBe(false);
    for (const r of [again, flags, missing]) expect(r.stdout).not.toContain('[gpu]');
  });
});
