import { defineConfig } from 'vitest/config';
// @ts-expect-error plain .mjs helper without types
import { envWithVulkan } from './scripts/vulkan-env.mjs';

// Forked test workers inherit this environment at spawn, so Dawn can dlopen libvulkan.so.1.
Object.assign(process.env, envWithVulkan());

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // One process for all files, modules shared: the GPU device and its pipeline cache are built
    // once (SwiftShader compiles each pipeline for seconds), and SwiftShader already spreads every
    // dispatch over all cores, so one file at a time is fastest.
    fileParallelism: false,
    maxWorkers: 1,
    isolate: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 10_000,
    reporters: ['default'],
    setupFiles: ['tests/setup/gpu-errors.ts'],
  },
});
