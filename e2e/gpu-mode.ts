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
export const BASE_ARGS = ['--headless=new', '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const WEBGPU_ARGS: Record<GpuMode, string[]> = {
  swiftshader: ['--enable-unsafe-webgpu', '--enable-unsafe-swiftshader'],
  system: ['--enable-unsafe-webgpu', '--enable-features=Vulkan'],
};

export const LAUNCH_ARGS = [...BASE_ARGS, ...WEBGPU_ARGS[GPU_MODE]];

/** Text the page's adapter line must contain in this mode (any adapter will do on a system GPU). */
export const EXPECTED_ADAPTER: RegExp = GPU_MODE === 'swiftshader' ? /swiftshader/i : /\S/;
