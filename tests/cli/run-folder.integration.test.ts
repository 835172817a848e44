// Issue 22, items 4, 6 and 8, with real processes: two writers of one run folder (the second is
// refused naming the first, before any GPU work), a stale lock of a killed process taken over, a
// resume at data cursor 2^40 (the stream jumps; nothing is redrawn), an out-of-range cursor refused,
// a SIGTERM during start-up, a folder killed before its first checkpoint reused, a run folder deleted
// under a run, run names confined to --out, export's --force, and --help on every CLI.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { decodeCheckpoint, encodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { runCli } from '../helpers/cli-process';

const root = mkdtempSync(join(tmpdir(), 'nsa-run-folder-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const RUN = ['--preset', 'tiny', '--data', 'random', '--batch', '1', '--eval-every', '0', '--log-every', '1'];
const cli = (script: string, args: string[], timeout = 300_000) =>
  spawnSync(process.execPath, ['scripts/run-node.mjs', `src/cli/${script}.ts`, ...args], { encoding: 'utf8', timeout });
const train = (args: string[]) => cli('train', args);

/** A child `npm run train`; `until(pattern)` resolves once its output matches. */
function startTrain(args: string[]): {
  child: ChildProcess;
  out: () => string;
  until: (re: RegExp) => Promise<void>;
  exit: Promise<number | null>;
} {
  const child = spawn(process.execPath, ['scripts/run-node.mjs', 'src/cli/train.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: Array<{ re: RegExp; res: () => void }> = [];
  const feed = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0))
      if (w.re.test(out)) w.res();
      else waiters.push(w);
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  const exit = new Promise<number | null>((res) =>
    child.on('close', (c, sig) => res(c ?? (sig === 'SIGTERM' ? 143 : sig === 'SIGKILL' ? 137 : null))),
  );
  const until = (re: RegExp) =>
    new Promise<void>((res, rej) => {
      if (re.test(out)) return res();
      waiters.push({ re, res });
      void exit.then((c) => rej(new Error(`exited ${c} before ${re}:\n${out}`)));
    });
  return { child, out: () => out, until, exit };
}

const ckptOf = (dir: string) => decodeCheckpoint(readFileSync(join(dir, 'checkpoint.safetensors')), { file: dir });

describe('npm run train: one writer per run folder', { timeout: 600_000 }, () => {
  const dir = join(root, 'shared');

  it('a second writer (a new run of the same name, a --resume) is refused naming the holder, before any GPU work; the lock goes with the first', async () => {
    const a = startTrain(['--out', root, '--run', 'shared', ...RUN, '--steps', '400', '--checkpoint-every', '1']);
    await a.until(/\[checkpoint\] step 1 /);
    const lock = JSON.parse(readFileSync(join(dir, 'run.lock'), 'utf8')) as { pid: number; host: string };
    expect([lock.host, typeof lock.pid]).toEqual([hostname(), 'number']);
    const again = train(['--out', root, '--run', 'shared', ...RUN, '--steps', '3']);
    const resume = train(['--resume', dir]);
    a.child.kill('SIGTERM');
    const code = await a.exit;
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/already exists: continue it with --resume/); // it has a checkpoint: not reusable, not touched
    expect(resume.status, resume.stderr).toBe(2);
    expect(resume.stderr).toMatch(
      new RegExp(`being written by PID ${lock.pid} on ${hostname()}, train, since \\d{4}-.*one writer per run folder`),
    );
    for (const r of [again, resume]) expect(r.stdout).not.toContain('[gpu]');
    expect(code, a.out()).toBe(143);
    expect(existsSync(join(dir, 'run.lock'))).toBe(false);
    // metrics.csv has each step once (the refused --resume did not rewrite it).
    const steps = readFileSync(join(dir, 'metrics.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((r) => r.split(',')[0]);
    expect(new Set(steps).size).toBe(steps.length);
  });

  it('a stale lock (a killed holder) is taken over and said so; temp files of interrupted writes removed; resume at cursor 2^40 needs no redraw', () => {
    const c = ckptOf(dir);
    const far = 2 ** 40;
    const bytes = encodeCheckpoint({
      ...c,
      config: { ...c.config, train: { ...c.config.train, steps: far + 1 } },
      state: { stepsDone: far, batchesDrawn: far * c.config.train.gradAccum },
      savedAt: 'then\u001b]0;retitled\u0007\u001b[2J', // control characters in the metadata: printed escaped
    });
    const farDir = join(root, 'far');
    mkdirSync(farDir);
    writeFileSync(join(farDir, 'checkpoint.safetensors'), bytes);
    copyFileSync(join(dir, 'run-source.json'), join(farDir, 'run-source.json'));
    const dead = spawnSync(process.execPath, ['-e', '0']).pid; // a PID that has exited
    writeFileSync(
      join(farDir, 'run.lock'),
      JSON.stringify({ pid: dead, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'train' }),
    );
    writeFileSync(join(farDir, '.checkpoint.safetensors.tmp-424242'), 'torn');
    const r = train(['--resume', farDir, '--stall-timeout', '120']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`[lock] took over ${join(farDir, 'run.lock')}: its holder (PID ${dead} on ${hostname()}`);
    expect(r.stderr).toContain(`[lock] removed ${join(farDir, '.checkpoint.safetensors.tmp-424242')}`);
    expect(r.stdout).toContain(`resumed at step ${far}, checkpoint of then\\x1b]0;retitled\\x07\\x1b[2J)`);
    expect(r.stdout + r.stderr).not.toContain('\u001b');
    const heartbeat = readFileSync(join(farDir, 'heartbeat.jsonl'), 'utf8');
    expect(heartbeat).toContain(`resumed at step ${far} (${far * c.config.train.gradAccum} batches drawn)`);
    expect(ckptOf(farDir).state).toEqual({ stepsDone: far + 1, batchesDrawn: (far + 1) * c.config.train.gradAccum });
    expect(readdirSync(farDir).filter((f) => f.startsWith('.') || f.startsWith('run.lock'))).toEqual([]);
  });

  it('a data cursor no run of the config can reach is refused naming the file and field, before any GPU work', () => {
    const c = ckptOf(dir);
    const bad = join(root, 'bad-cursor');
    mkdirSync(bad);
    writeFileSync(
      join(bad, 'checkpoint.safetensors'),
      encodeCheckpoint({ ...c, state: { stepsDone: c.state.stepsDone, batchesDrawn: c.state.batchesDrawn + 1 } }),
    );
    const r = train(['--resume', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`invalid checkpoint ${join(bad, 'checkpoint.safetensors')}`);
    expect(r.stderr).toMatch(/state\.batchesDrawn: is \d+, but \d+ steps of train\.gradAccum 1 draw \d+ batches/);
    expect(r.stdout).not.toContain('[gpu]');
  });
});

describe('npm run train: start-up stops and folders without a checkpoint', { timeout: 600_000 }, () => {
  it('SIGTERM during start-up: "nothing written", no "step -1", exit 143', () => {
    // The trainer signals itself right after acquiring the GPU (a test hook in src/cli/train.ts): the
    // signal is caught but not yet dispatched while start-up goes on, as one sent during Dawn's
    // blocking start-up is. It was lost when start-up swapped its signal listeners, and the run
    // trained all its steps; an outside kill timed against the output only hit that now and then.
    const r = spawnSync(
      process.execPath,
      ['scripts/run-node.mjs', 'src/cli/train.ts', '--out', root, '--run', 'early', ...RUN, '--steps', '3'],
      { encoding: 'utf8', timeout: 300_000, env: { ...process.env, NSA_TEST_SIGTERM_AFTER_GPU: '1' } },
    );
    const out = r.stdout + r.stderr;
    expect([r.signal, r.status], out).toEqual([null, 143]);
    expect(out).toMatch(/stopped by SIGTERM during start-up, before any step ran: nothing written/);
    expect(out).not.toMatch(/step +0 \||step -1/);
    expect(existsSync(join(root, 'early', 'checkpoint.safetensors'))).toBe(false);
  });

  it('a folder killed before its first checkpoint: --resume says so; the same command reuses it', async () => {
    const args = ['--out', root, '--run', 'unfinished', ...RUN, '--checkpoint-every', '0'];
    const a = startTrain([...args, '--steps', '400']);
    await a.until(/step +0 \|/);
    const dir = join(root, 'unfinished');
    // kill -9 the trainer itself (the lock names it; scripts/run-node.mjs is its launcher).
    process.kill((JSON.parse(readFileSync(join(dir, 'run.lock'), 'utf8')) as { pid: number }).pid, 'SIGKILL');
    expect(await a.exit).toBe(137);
    expect(existsSync(join(dir, 'checkpoint.safetensors'))).toBe(false);
    const resume = train(['--resume', dir]);
    expect(resume.status).toBe(2);
    expect(resume.stderr).toMatch(
      /has no checkpoint\.safetensors: it was stopped before its first checkpoint.*same flags \(the folder is reused\)/,
    );
    const again = train([...args, '--steps', '2']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain(`[run] reusing ${dir}: it was stopped before its first checkpoint`);
    // Steps 0 and 1, then the final evaluation at 2: the killed run's rows are gone.
    const rows = readFileSync(join(dir, 'metrics.csv'), 'utf8').trim().split('\n').slice(1);
    expect(rows.map((r) => r.split(',')[0])).toEqual(['0', '1', '2']);
    expect(rows[2].split(',')[1]).toBe(''); // an eval row (no training loss)
    expect(ckptOf(dir).state.stepsDone).toBe(2);
  });

  it('the run folder deleted under a run: the file and what was written are named, no checkpoint remains, exit 5', async () => {
    const a = startTrain(['--out', root, '--run', 'deleted', ...RUN, '--steps', '400', '--checkpoint-every', '1']);
    await a.until(/\[checkpoint\] step 2 /);
    rmSync(join(root, 'deleted'), { recursive: true });
    const code = await a.exit;
    expect(code, a.out()).toBe(5);
    expect(a.out()).toMatch(
      /error: cannot write .*deleted\/\S+ \((heartbeat|metrics\.csv row|checkpoint at step)[^)]*\)+: ENOENT, the folder no longer exists/,
    );
    expect(a.out()).toMatch(/No checkpoint of this run remains \(.*deleted is gone\): nothing to resume/);
    expect(a.out()).toContain('(exit 5: a write to the run folder failed)');
  });

  it('--run outside --out is refused naming --run; nothing is created', () => {
    const r = train(['--out', join(root, 'inner'), '--run', '../../escaped', ...RUN, '--steps', '1']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^--run \.\.\/\.\.\/escaped: must be one folder name/m);
    expect(existsSync(join(root, 'inner')) || existsSync(join(root, '..', 'escaped'))).toBe(false);
  });
});

describe('export and --help', { timeout: 600_000 }, () => {
  it('export refuses a non-empty --out without --force', () => {
    const out = join(root, 'export');
    const run = join(root, 'shared');
    expect(cli('export', [run, '--out', out]).status).toBe(0);
    const again = cli('export', [run, '--out', out]);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/--out .*export is not empty \(it holds .*config\.json.*\): give an empty or new folder, or --force/);
    const forced = cli('export', [run, '--out', out, '--force']);
    expect(forced.status, forced.stderr).toBe(0);
  });

  // Concurrent: each is mostly a process start (tests/helpers/cli-process.ts).
  it.concurrent.each(['train', 'bench', 'bench-nsa', 'train-golden', 'gpu-adapter', 'eval-recall', 'generate', 'compare', 'export'])(
    '%s --help: usage on stdout, exit 0, no GPU',
    async (script) => {
      const r = await runCli(script, ['--help']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/usage: npm run /i);
      expect(r.stdout).not.toContain('[gpu]');
    },
  );
});
