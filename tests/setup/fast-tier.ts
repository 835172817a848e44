// Runs before every file of the fast (in-process, CPU-only) tier: any attempt to use the GPU or to
// start a process fails the test loudly instead of quietly starting Dawn/SwiftShader, a CLI or
// python beside the parallel workers. Three doors are shut:
// - tests/helpers/gpu.ts's getGpu(): the shared-device slot on globalThis throws when read;
// - the Dawn module ('webgpu'), for code that acquires a device without the helper;
// - node:child_process: every way to start a process throws.
// A file that needs the GPU belongs in the gpu tier (tests/helpers/tiers.mjs); one that starts a
// process is named *.integration.test.ts.
import { vi } from 'vitest';

import { TEST_GPU_KEY } from '../helpers/gpu';
import { FAST_TIER_GPU_ERROR } from '../helpers/tiers.mjs';

vi.mock('webgpu', () => {
  throw new Error("fast tier must not use the GPU: this file imported 'webgpu' (Dawn); move it to the gpu tier in tests/helpers/tiers.mjs");
});

const refuse = () => {
  throw new Error(`${FAST_TIER_GPU_ERROR}: this file called getGpu(); move it to the gpu tier in tests/helpers/tiers.mjs`);
};
Object.defineProperty(globalThis, TEST_GPU_KEY, { configurable: true, get: refuse, set: refuse });

// vi.mock is hoisted above the module's own code: the factory brings its own helpers.
const childProcess = vi.hoisted(() => async () => {
  const { FAST_TIER_SPAWN_ERROR: message } = await import('../helpers/tiers.mjs');
  const refused = (name: string) => () => {
    throw new Error(`${message}: this file called child_process.${name}(); name it *.integration.test.ts`);
  };
  const fns = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'];
  const mod = Object.fromEntries(fns.map((f) => [f, refused(f)]));
  return { ...mod, default: mod };
});
vi.mock('node:child_process', childProcess);
vi.mock('child_process', childProcess);
