// Runs before every test file: a file during which the shared test GPU reported a validation,
// out-of-memory or internal error (or lost the device) fails, even if its assertions passed.
import { afterAll, beforeAll } from 'vitest';

import { TEST_GPU_KEY, type TestGpuHolder } from '../helpers/gpu';

let reportsAtStart = 0;

async function current() {
  const p = (globalThis as TestGpuHolder)[TEST_GPU_KEY];
  return p ? await p : undefined;
}

beforeAll(async () => {
  reportsAtStart = (await current())?.reports.length ?? 0;
});

afterAll(async () => {
  const gpu = await current();
  if (!gpu) return;
  const errors = gpu.reports.slice(reportsAtStart);
  if (errors.length) throw new Error(`GPU reported errors during this file:\n${errors.map((e) => `${e.kind}: ${e.message}`).join('\n')}`);
});
