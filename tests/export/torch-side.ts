// Runs the PyTorch package (python/nsa_playground) from the tests: the interpreter that has torch
// (tests/helpers/python.ts: Debian's torch 1.13) or .venv-hf's (torch 2.x and transformers, made by
// scripts/ensure-test-env.mjs), PYTHONPATH=python, and a failure — never a skip — when one is missing.
import { type ChildProcessWithoutNullStreams, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { expect } from 'vitest';

import type { ExportFile } from '../../src/train/export/directory';
import { pythonWithTorch } from '../helpers/python';

const PACKAGE_DIR = resolve(__dirname, '../../python');

/** The python with torch; fails the test with the fix when there is none. */
export function torchPython(): string {
  const { python, hasTorch } = pythonWithTorch();
  expect(hasTorch, "no python3 with torch: install Debian's python3-torch (node scripts/ensure-test-env.mjs does, as root)").toBe(true);
  return python;
}

/** .venv-hf's python (torch 2.x CPU, transformers, safetensors, tokenizers, pytest); fails the test with the fix when missing. */
export function hfPython(): string {
  const python = resolve(__dirname, '../../.venv-hf/bin/python');
  expect(existsSync(python), `${python} is missing: node scripts/ensure-test-env.mjs --hf-venv-only makes it`).toBe(true);
  return python;
}

/** The two torches the package's tests run on: Debian's 1.13 and .venv-hf's 2.x. */
export const TORCHES = ['torch 1.13 (Debian)', 'torch 2.x (.venv-hf)'] as const;
export type TorchName = (typeof TORCHES)[number];
export const pythonOf = (t: TorchName): string => (t === TORCHES[0] ? torchPython() : hfPython());

/** `python -m <module> ...args` with the package on the path; throws with its output when it fails. */
export function runTorch(
  args: readonly string[],
  o: { env?: Record<string, string>; timeoutMs?: number; command?: readonly string[]; python?: string } = {},
): SpawnSyncReturns<string> {
  const python = o.python ?? torchPython();
  const cmd = o.command ?? [python];
  const r = spawnSync(cmd[0], [...cmd.slice(1), ...args], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: PACKAGE_DIR, OMP_NUM_THREADS: '1', ...o.env },
    timeout: o.timeoutMs ?? 120_000,
  });
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} ${args.join(' ')} exited ${r.status ?? r.signal}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** Writes exported files into dir. */
export function writeFiles(dir: string, files: readonly ExportFile[]): void {
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.bytes);
}

/**
 * One interpreter answering many parity runs (tests/export/parity_server.py): `run(argv, plant)`
 * resolves when `python -m nsa_playground.parity argv` has written its output, in request order, and
 * rejects with the script's error and the interpreter's stderr. `close()` ends it.
 */
export class ParityServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<{ done: () => void; fail: (e: Error) => void }> = [];
  private stdout = '';
  private stderr = '';

  constructor(python: string) {
    this.child = spawn(python, [join(__dirname, 'parity_server.py')], {
      env: { ...process.env, PYTHONPATH: PACKAGE_DIR, OMP_NUM_THREADS: '1' },
    });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-20_000)));
    this.child.stdout.on('data', (d: Buffer) => {
      this.stdout += d.toString();
      for (let nl = this.stdout.indexOf('\n'); nl >= 0; nl = this.stdout.indexOf('\n')) {
        const answer = JSON.parse(this.stdout.slice(0, nl)) as { ok?: true; error?: string };
        this.stdout = this.stdout.slice(nl + 1);
        const w = this.waiting.shift()!;
        if (answer.ok) w.done();
        else w.fail(new Error(`${python} parity_server.py: ${answer.error}\n${this.stderr}`));
      }
    });
    this.child.on('exit', (code, signal) => {
      for (const w of this.waiting.splice(0)) w.fail(new Error(`${python} parity_server.py exited ${code ?? signal}:\n${this.stderr}`));
    });
  }

  run(argv: readonly string[], plant?: string): Promise<void> {
    return new Promise((done, fail) => {
      this.waiting.push({ done, fail });
      this.child.stdin.write(JSON.stringify({ argv, plant: plant ?? null }) + '\n');
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
