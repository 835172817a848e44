import { availableParallelism } from 'node:os';

import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// @ts-expect-error plain .mjs helper without types
import { envWithVulkan } from './scripts/vulkan-env.mjs';
import { TIERS } from './tests/helpers/tiers.mjs';

// Forked test workers inherit this environment at spawn, so Dawn can dlopen libvulkan.so.1.
Object.assign(process.env, envWithVulkan());

// Four tiers (tests/helpers/tiers.mjs lists their files; tests/tiers.test.ts checks that every
// test file is in exactly one): `vitest run --project fast|integration|gpu|learning`, or all four
// in order with `vitest run`. sequence.groupOrder runs them one after another, never side by side:
// SwiftShader already spreads every dispatch over all cores.
//
// integration, gpu and learning: one process for all files, modules shared: the GPU device and its
// pipeline cache are built once per tier (SwiftShader compiles each pipeline for seconds), one file
// at a time. tests/setup/gpu-errors.ts fails a file during which the GPU reported an error.
function sharedGpuProcess(name: 'integration' | 'gpu' | 'learning', groupOrder: number) {
  return {
    extends: true as const,
    test: {
      name,
      ...TIERS[name],
      environment: 'node' as const,
      pool: 'forks' as const,
      fileParallelism: false,
      maxWorkers: 1,
      isolate: false,
      setupFiles: ['tests/setup/gpu-errors.ts'],
      sequence: { groupOrder },
    },
  };
}

// The kernel registry's compile-all file runs last in its tier: the tier shares one pipeline cache
// (sharedGpuProcess below), so by then the compositions the other files built are compiled already
// and it compiles only the rest (SwiftShader spends about 0.1 s of CPU on each pipeline).
class CompileAllLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const last = (f: TestSpecification) => f.moduleId.endsWith('/tests/kernels/compile-all.test.ts');
    return [...sorted.filter((f) => !last(f)), ...sorted.filter(last)];
  }
}

export default defineConfig({
  test: {
    environment: 'node',
    sequence: { sequencer: CompileAllLast },
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 10_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          ...TIERS.fast,
          // In process and CPU only, isolated files, in parallel worker threads (they start faster
          // than forks); any GPU use or child process fails. Vitest's default leaves a core to
          // itself (one worker on a 2-core machine); the files are CPU-bound, so use them all.
          pool: 'threads',
          isolate: true,
          maxWorkers: Math.max(2, availableParallelism() - 1),
          setupFiles: ['tests/setup/fast-tier.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      sharedGpuProcess('integration', 1),
      sharedGpuProcess('gpu', 2),
      sharedGpuProcess('learning', 3),
    ],
  },
});
