// Runs before every file of the fast (CPU-only) tier: any attempt to use the GPU fails the test
// loudly instead of quietly starting Dawn/SwiftShader in a parallel worker. Two doors are shut:
// - tests/helpers/gpu.ts's getGpu(): the shared-device slot on globalThis throws when read;
// - the Dawn module ('webgpu'), for code that acquires a device without the helper.
// A file that needs the GPU belongs in the gpu tier (tests/helpers/tiers.mjs).
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
