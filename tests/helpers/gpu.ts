// Shared GPU setup for tests: one device per test file, on the system GPU or SwiftShader.
// A test that expected an adapter and got none fails here, loudly; it never skips.
import { afterAll } from 'vitest';
import { acquireNodeGpu } from '../../src/gpu/node-device';
import type { GpuContext } from '../../src/gpu/context';

let ctx: Promise<GpuContext> | undefined;

export function getGpu(): Promise<GpuContext> {
  if (!ctx) {
    ctx = acquireNodeGpu({ announce: false });
    afterAll(async () => {
      const g = await ctx!;
      const errors = g.reports.filter((r) => r.kind !== 'device-lost');
      g.destroy();
      if (errors.length) throw new Error(`GPU reported errors during this file: ${errors.map((e) => e.message).join('\n')}`);
    });
  }
  return ctx;
}
