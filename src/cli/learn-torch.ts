// The PyTorch engine of `npm run learn` (python/nsa_playground/learn.py): the fresh model goes to it
// as an export directory (the WebGPU trainer's seeded initial weights), the batches from this
// process's task generator through its stdin (held-out batches first, then one per step, only as
// fast as it trains), its JSON lines back.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { paramSpecs } from '../definitions/params';
import { initParams } from '../model/init';
import type { RunConfig } from '../train/config';
import type { Batch, Dataset } from '../train/data/datasets';
import { isShortSeqDataset } from '../train/data/short-seq';
import { exportDirectoryFiles } from '../train/export/directory';
import { writeExportDirectory } from './export-dir';
import { UsageError } from './usage';

const PYTHON_DIR = resolve(import.meta.dirname, '../../python');

// Finds the packages without importing them: torch 2.x takes ~5 s of CPU to import, and the engine's
// own process imports it anyway (a broken install then fails there, with its traceback).
const HAS_TORCH = "import importlib.util as u, sys; sys.exit(0 if u.find_spec('torch') and u.find_spec('safetensors') else 1)";

/**
 * The python to run: --python, else $NSA_PYTHON, else the test set-up's venv (.venv-hf: torch 2.x
 * with a fast BLAS), else python3 or /usr/bin/python3 (Debian's torch) — the first that has torch and
 * safetensors installed.
 */
export function torchPython(flag?: string): string {
  const root = resolve(import.meta.dirname, '../..');
  const candidates = flag ? [flag] : [process.env.NSA_PYTHON, join(root, '.venv-hf/bin/python'), 'python3', '/usr/bin/python3'];
  for (const p of candidates) {
    if (!p || (p.includes('/') && !existsSync(p))) continue;
    if (spawnSync(p, ['-c', HAS_TORCH], { stdio: 'ignore' }).status === 0) return p;
  }
  throw new UsageError(
    flag
      ? `--python: ${flag} cannot import torch and safetensors`
      : 'no python with torch and safetensors: run `node scripts/ensure-test-env.mjs` (it makes .venv-hf) or pass --python',
    { flag: 'python', value: flag ?? '' },
  );
}

export interface TorchRunLine {
  kind: 'step' | 'eval' | 'done';
  step: number;
  loss?: number;
  accuracy?: number;
  sequence_accuracy?: number;
  /** Eval lines: [j] the accuracy of each sequence's j-th answer (learn.py score). */
  accuracy_by_answer?: number[];
  /** Eval lines: per held-out sequence, one character per answer, '1' right, '0' wrong (learn.py score). */
  answers_right?: string[];
  answers?: number;
  /** Eval lines of an NSA, MoBA or DSA model: the routing of the answers (needle.py; needle-read.ts's NeedleScore in JSON names). */
  needle?: NeedleLine;
  reached?: boolean;
  seconds?: number;
  /** NSA step lines: key rows per query and group per branch, from the step's selection (nsa.py keys_read). */
  keys_counted?: { cmp: number; sel: number; win: number };
}

/** A NeedleScore as the eval lines of both engines carry it. */
export interface NeedleLine {
  answers: number;
  selected_by_layer: (number | null)[];
  selected_any: number | null;
  accuracy_selected: number | null;
  accuracy_missed: number | null;
}

function batchBytes(b: Batch): Buffer {
  const out = Buffer.alloc(8 * b.tokens.length);
  out.set(new Uint8Array(b.tokens.buffer, b.tokens.byteOffset, b.tokens.byteLength), 0);
  out.set(new Uint8Array(b.targets.buffer, b.targets.byteOffset, b.targets.byteLength), 4 * b.tokens.length);
  return out;
}

/** Trains one grid point with the PyTorch engine; `onLine` sees every JSON line it prints. */
export async function runTorch(
  config: RunConfig,
  dataset: Dataset,
  o: { python: string; evalBatches: number; evalEvery: number; target: number; threads?: number; onLine(l: TorchRunLine): void },
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'nsa-learn-'));
  try {
    const zeros = (m: Map<string, Float32Array>) => new Map([...m].map(([k, v]) => [k, new Float32Array(v.length)]));
    const params = initParams(paramSpecs(config.model), config.train.seed);
    writeExportDirectory(
      dir,
      exportDirectoryFiles({ config, state: { stepsDone: 0, batchesDrawn: 0 }, params, adamM: zeros(params), adamV: zeros(params) }),
    );
    const args = [
      '-m',
      'nsa_playground.learn',
      '--from',
      dir,
      '--eval-batches',
      String(o.evalBatches),
      '--eval-every',
      String(o.evalEvery),
    ];
    args.push('--target', String(o.target));
    if (o.threads) args.push('--threads', String(o.threads));
    const child = spawn(o.python, args, {
      cwd: PYTHON_DIR,
      env: { ...process.env, PYTHONPATH: PYTHON_DIR, PYTHONUNBUFFERED: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    let pending = '';
    child.stdout.on('data', (d: Buffer) => {
      pending += d.toString();
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl).trim();
        pending = pending.slice(nl + 1);
        if (line) o.onLine(JSON.parse(line) as TorchRunLine);
      }
    });
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    let open = true;
    void exited.then(() => (open = false));
    child.stdin.on('error', () => (open = false)); // EPIPE: it stopped early (target reached)
    const write = (buf: Buffer) =>
      new Promise<void>((done) => {
        if (!open) return done();
        if (child.stdin.write(buf)) done();
        else {
          const go = () => {
            child.stdin.off('drain', go);
            child.off('close', go);
            done();
          };
          child.stdin.once('drain', go);
          child.once('close', go);
        }
      });
    for (const b of dataset.validationBatches(o.evalBatches)) await write(batchBytes(b));
    // One batch per step, B·T tokens: T is train.shortSeqLen for a sequence-length warm-up's steps
    // (learn.py reads that many), else model.seqLen.
    const batchAt = (T: number): Batch => ({
      tokens: new Int32Array(config.train.batchSize * T),
      targets: new Int32Array(config.train.batchSize * T),
    });
    const fullBatch = batchAt(config.model.seqLen);
    const shortBatch = isShortSeqDataset(dataset) ? batchAt(dataset.shortSeqLen) : fullBatch;
    for (let s = 0; s < config.train.steps && open; s++) {
      const batch = isShortSeqDataset(dataset) && dataset.nextSeqLen === dataset.shortSeqLen ? shortBatch : fullBatch;
      dataset.nextTrainBatch(batch);
      await write(batchBytes(batch));
    }
    if (open) child.stdin.end();
    const code = await exited;
    if (code !== 0) throw new Error(`the PyTorch engine (${o.python} -m nsa_playground.learn) exited with ${code}:\n${stderr.trim()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
