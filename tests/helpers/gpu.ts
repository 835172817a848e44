// Shared GPU setup for tests: one device for the whole run (Vitest runs every file in one process
// with shared modules, see vitest.config.ts), so pipelines compile once. A test that expected an
// adapter and got none fails here, loudly; it never skips. tests/setup/gpu-errors.ts fails any file
// during which the GPU reported an error.
import type { GpuContext } from '../../src/gpu/context';
import { acquireNodeGpu } from '../../src/gpu/node-device';

export const TEST_GPU_KEY = '__nsaPlaygroundTestGpu';
const KEY = TEST_GPU_KEY;
export type TestGpuHolder = { [TEST_GPU_KEY]?: Promise<GpuContext> };
type Holder = TestGpuHolder;

function shared(): Promise<GpuContext> {
  const g = globalThis as Holder;
  g[KEY] ??= acquireNodeGpu({ announce: false });
  return g[KEY];
}

/** The shared test device. Call at module level or inside tests. */
export function getGpu(): Promise<GpuContext> {
  return shared();
}
