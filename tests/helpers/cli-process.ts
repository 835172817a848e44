// A CLI (src/cli/<entry>.ts) run as its own process, asynchronously, so that a test's refusals can
// run side by side: each is mostly a process start (scripts/run-node.mjs: Node, its cached bundle, Dawn).
import { spawn } from 'node:child_process';

export interface CliResult {
  /** Exit code (null when killed). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs src/cli/<entry>.ts with args on the software adapter (NSA_GPU=software). */
export function runCli(entry: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run-node.mjs', `src/cli/${entry}.ts`, ...args], {
      env: { ...process.env, NSA_GPU: 'software' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // 'close', not 'exit': after the output pipes are drained (a fast exit can beat their last data).
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
