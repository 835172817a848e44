// How the e2e suite launches Chromium. NSA_E2E_GPU picks the WebGPU backend:
//   swiftshader (default) — software Vulkan from Debian's chromium package; works with no GPU.
//   system                — the machine's GPU through Vulkan (Chrome/Chromium on Linux).
// NSA_CHROMIUM overrides the browser binary (default /usr/bin/chromium: Playwright cannot
// download browsers here).

export type GpuMode = 'swiftshader' | 'system';

function readMode(): GpuMode {
  const v = process.env.NSA_E2E_GPU ?? 'swiftshader';
  if (v !== 'swiftshader' && v !== 'system') throw new Error(`NSA_E2E_GPU must be 'swiftshader' or 'system' (got '${v}')`);
  return v;
}

export const GPU_MODE: GpuMode = readMode();

export const CHROMIUM_PATH = process.env.NSA_CHROMIUM ?? '/usr/bin/chromium';

/** Quiet, reproducible headless Chromium. */
export const BASE_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const WEBGPU_ARGS: Record<GpuMode, string[]> = {
  swiftshader: ['--enable-unsafe-webgpu', '--enable-unsafe-swiftshader'],
  // Raw timestamps for the in-page benchmark's figures: Chrome rounds them to ~0.1 ms by default.
  system: ['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--disable-dawn-features=timestamp_quantization'],
};

export const LAUNCH_ARGS = [...BASE_ARGS, ...WEBGPU_ARGS[GPU_MODE]];

/** Text the page's adapter line must contain in this mode (any adapter will do on a system GPU). */
export const EXPECTED_ADAPTER: RegExp = GPU_MODE === 'swiftshader' ? /swiftshader/i : /\S/;

/**
 * The run the playground spec trains. SwiftShader: the tiny preset with NSA attention (the stepper
 * needs it), 10 steps, warmup 2 so the loss visibly falls. A real GPU: the small preset with NSA,
 * 300 steps (long enough for the pause to land mid-run and the charts to fill).
 */
export interface E2eProfile {
  /** The golden loss's key in e2e/golden.json is `name@vendor/architecture` (see golden.ts). */
  name: string;
  /** The preset the hash starts from (the stepper checks use its NSA settings). */
  preset: 'tiny' | 'small';
  /** URL hash of the config (see src/ui/url-state.ts). */
  hash: string;
  steps: number;
  /** Pause once at least this many steps are done. */
  pauseAfter: number;
  /** The loss must fall by at least this much from the first to the last step. */
  minLossDrop: number;
}

export const E2E_PROFILE: E2eProfile =
  GPU_MODE === 'swiftshader'
    ? {
        name: 'swiftshader/tiny-nsa-b2-10',
        preset: 'tiny',
        // At 2 sequences a step (page-helpers' SMALL_BATCH): a third of batch 8's CPU on SwiftShader.
        hash: 'v=1&preset=tiny&train.batchSize=2&model.attention=nsa&train.steps=10&train.warmupSteps=2&train.evalEvery=5',
        steps: 10,
        pauseAfter: 3,
        // Measured at batch 8: 5.59 at step 0 → 4.3 at step 9; at batch 2, 5.59 → 4.66 at step 10 (CLI).
        minLossDrop: 0.5,
      }
    : {
        name: 'system/small-nsa-300',
        preset: 'small',
        hash: 'v=1&preset=small&model.attention=nsa&train.steps=300&train.evalEvery=100',
        steps: 300,
        pauseAfter: 40,
        minLossDrop: 1.0,
      };
