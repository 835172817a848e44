// The Vitest tiers (projects). vitest.config.ts builds its projects from these lists and
// tests/tiers.test.ts checks them, so both read the same globs.
//
// - fast: in process and CPU only (float64 references, configs, data, UI logic, the worker's pure
//   parts): no GPU, no child process, no python. Runs files in parallel; tests/setup/fast-tier.ts
//   makes any GPU use or process spawn in it fail loudly.
// - integration: the CLIs, scripts and python as child processes (strict flags, kill -9 and
//   resume, the stall watchdog, torchrun, PyTorch parity, the GPU bundle's scripts). A file is in
//   it by its name: `*.integration.test.ts`, in the folder of what it tests.
// - gpu: kernels, NSA kernels, the whole-model step, GPU prefill/decode, the snapshot reader and
//   anything else that needs the WebGPU adapter (Dawn; SwiftShader without a GPU).
// - learning: training runs to a loss or accuracy target (tests/learning/), `npm run
//   test:learning`; `npm test` leaves it out. Its short check (LEARNING_CHECK: no leakage, and a
//   first fall of the loss, in about 25 s) runs in the gpu tier, so `npm test` keeps it.
//
// integration, gpu and learning run every file in one process with shared modules (one device, one
// pipeline cache), one file at a time.
//
// A file belongs to a tier by its directory glob, with the GPU/learning files of mixed directories
// named one by one and excluded from fast. A new test file under a new top-level tests/ folder
// lands in no tier and tests/tiers.test.ts fails, naming it; a new file in a fast folder that uses
// the GPU fails at its first getGpu() (or import of Dawn) with 'fast tier must not use the GPU':
// name it in GPU_FILES below.
//
// Plain .mjs (types in tiers.d.mts) so the Vite config loader imports it with its extension.
// Globs are picomatch-style, relative to the repository root; use only `*`, `**` and literal
// paths (tests/tiers.test.ts matches them with its own small matcher).

/** Training to a loss or accuracy target. */
export const LEARNING_FILES = ['tests/learning/**/*.test.ts'];

/** The learning check that runs in the gpu tier (about 25 s on SwiftShader). */
export const LEARNING_CHECK = 'tests/learning/check.test.ts';

/** Child processes: CLIs, scripts, python, torchrun. */
export const INTEGRATION_FILES = ['tests/**/*.integration.test.ts'];

/** Whole folders that need the GPU. */
const GPU_FOLDERS = ['tests/kernels/**/*.test.ts', 'tests/nsa-gpu/**/*.test.ts', 'tests/dsa-gpu/**/*.test.ts', 'tests/model/**/*.test.ts'];

/** GPU files in otherwise CPU-only folders (each acquires the shared test device). */
export const GPU_FILES = [
  'tests/cli/bench-attention-gpu.test.ts',
  'tests/decode/cli-gpu.test.ts',
  'tests/decode/gpu-attend-split.test.ts',
  'tests/decode/gpu-decode.test.ts',
  'tests/decode/gpu-matvec-split.test.ts',
  'tests/decode/gpu-prefill.test.ts',
  'tests/decode/gpu-seek.test.ts',
  'tests/definitions/config-fuzz-train.test.ts',
  'tests/train/loop-trainer.test.ts',
  'tests/train/passkey-gpu.test.ts',
  'tests/train/recall.test.ts',
  'tests/train/resume.test.ts',
  'tests/train/short-seq-gpu.test.ts',
  'tests/ui/stepper-read.test.ts',
  'tests/worker/run-checkpoint.test.ts',
  'tests/worker/run.test.ts',
];

/** Folders whose files are CPU-only unless named in GPU_FILES or LEARNING_FILES. */
const FAST_FOLDERS = [
  'tests/*.test.ts',
  'tests/architecture/**/*.test.ts',
  'tests/bundle/**/*.test.ts',
  'tests/cli/**/*.test.ts',
  'tests/decode/**/*.test.ts',
  'tests/export/**/*.test.ts',
  'tests/nsa/**/*.test.ts',
  'tests/dsa/**/*.test.ts',
  'tests/definitions/**/*.test.ts',
  'tests/train/**/*.test.ts',
  'tests/ui/**/*.test.ts',
  'tests/worker/**/*.test.ts',
];

/** @type {Record<'fast' | 'integration' | 'gpu' | 'learning', { include: string[]; exclude: string[] }>} */
export const TIERS = {
  fast: { include: FAST_FOLDERS, exclude: [...GPU_FILES, ...LEARNING_FILES, ...INTEGRATION_FILES] },
  integration: { include: INTEGRATION_FILES, exclude: [] },
  gpu: { include: [...GPU_FOLDERS, ...GPU_FILES, LEARNING_CHECK], exclude: INTEGRATION_FILES },
  learning: { include: LEARNING_FILES, exclude: [LEARNING_CHECK] },
};

export const FAST_TIER_GPU_ERROR = 'fast tier must not use the GPU';
export const FAST_TIER_SPAWN_ERROR = 'fast tier must not start processes';
