#!/usr/bin/env node
// Runs a TypeScript entry point in Node with WGSL imports and a Vulkan loader on the library path.
// Usage: node scripts/run-node.mjs src/cli/train.ts [args...]
import { spawn } from 'node:child_process';

import { envWithVulkan } from './vulkan-env.mjs';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-node.mjs <entry.ts> [args...]');
  process.exit(2);
}
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--import', new URL('./register-wgsl.mjs', import.meta.url).href, entry, ...args],
  { stdio: 'inherit', env: envWithVulkan() },
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
// Die the way the child died, so a caller sees the signal (a test's SIGKILL, a Ctrl-C).
child.on('exit', (code, signal) => {
  if (signal) {
    for (const sig of ['SIGINT', 'SIGTERM']) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 0);
});
