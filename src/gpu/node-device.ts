// Device acquisition in Node through Dawn (npm `webgpu`). Uses the system's Vulkan GPU when there
// is one; otherwise falls back to SwiftShader's Vulkan driver from Debian's chromium package.
import { existsSync, readdirSync } from 'node:fs';

import { contextFromAdapter, describeAdapter, type GpuContext } from './context';
import { throttleDawnPolling } from './dawn-poll-throttle';
import { type GpuPreference, gpuPreferenceFromEnv } from './gpu-preference';

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

interface DawnModule {
  create(flags: string[]): GPU;
  globals: Record<string, unknown>;
}

let dawn: DawnModule | undefined;
// dawn.node tears the instance down when the object from create() is collected, even while its
// devices live; that crashes the process at random (futex / mutex aborts). Keep every instance.
const liveInstances: GPU[] = [];

/**
 * Dawn rounds timestamp-query results to multiples of 2^16 ns (65.5 µs) by default, a browser's
 * defence against timing attacks: the H200 run of 2026-11-28 read every decode token as 0.524 or
 * 0.262 ms. The CLIs and benchmarks measure kernels of a few µs, so they ask for the raw values.
 */
export const DAWN_FLAGS = ['disable-dawn-features=timestamp_quantization'];

function instance(create: DawnModule['create']): GPU {
  const gpu = create(DAWN_FLAGS);
  liveInstances.push(gpu);
  return gpu;
}

async function loadDawn(): Promise<DawnModule> {
  if (!dawn) {
    dawn = (await import('webgpu')) as unknown as DawnModule;
    // GPUBufferUsage, GPUMapMode, GPUValidationError, ... as in a browser.
    Object.assign(globalThis, dawn.globals);
  }
  return dawn;
}

export interface NodeGpuOptions {
  /** Default: NSA_GPU, else 'auto'. */
  prefer?: GpuPreference;
  /** Print which adapter was chosen (default true). */
  announce?: boolean;
}

/** One adapter request acquireNodeGpu made: the system's Vulkan drivers, or SwiftShader's. */
export type AdapterAttempt = 'system-vulkan' | 'swiftshader';

export interface NoAdapterDetails {
  /** The preference in force ('auto' tries the system GPU first). */
  prefer: GpuPreference;
  /** Adapter requests made, in order, each of which returned null (empty: none could be made). */
  tried: AdapterAttempt[];
  /** Whether SwiftShader's Vulkan driver manifest (SWIFTSHADER_ICD) exists. */
  swiftShaderInstalled: boolean;
  /** Whether LD_LIBRARY_PATH holds /usr/lib/chromium (its libvulkan.so.1). */
  vulkanLoaderOnPath: boolean;
}

export class NoAdapterError extends Error implements NoAdapterDetails {
  override readonly name: string = 'NoAdapterError';
  readonly prefer: GpuPreference;
  readonly tried: AdapterAttempt[];
  readonly swiftShaderInstalled: boolean;
  readonly vulkanLoaderOnPath: boolean;

  constructor(message: string, details: NoAdapterDetails) {
    super(message);
    this.prefer = details.prefer;
    this.tried = [...details.tried];
    this.swiftShaderInstalled = details.swiftShaderInstalled;
    this.vulkanLoaderOnPath = details.vulkanLoaderOnPath;
  }
}

// Where the Vulkan loader looks for driver manifests (plus the NVIDIA container location).
const ICD_DIRS = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/share/vulkan/icd.d', '/usr/local/nvidia/share/vulkan/icd.d'];

/** True when a system Vulkan driver may exist (skips a noisy, doomed first attempt otherwise). */
function systemVulkanDriversListed(): boolean {
  if (process.env.VK_DRIVER_FILES || process.env.VK_ADD_DRIVER_FILES) return true;
  return ICD_DIRS.some((d) => existsSync(d) && readdirSync(d).some((f) => f.endsWith('.json')));
}

export async function acquireNodeGpu(opts: NodeGpuOptions = {}): Promise<GpuContext> {
  const prefer = opts.prefer ?? gpuPreferenceFromEnv();
  const { create } = await loadDawn();
  let adapter: GPUAdapter | null = null;
  const tried: AdapterAttempt[] = [];
  const trySystem = prefer === 'hardware' || (prefer === 'auto' && !process.env.VK_ICD_FILENAMES && systemVulkanDriversListed());
  if (trySystem) {
    tried.push('system-vulkan');
    adapter = await instance(create).requestAdapter({ powerPreference: 'high-performance' });
  }
  const swiftShaderInstalled = existsSync(SWIFTSHADER_ICD);
  if (!adapter && swiftShaderInstalled && prefer !== 'hardware') {
    // The Vulkan loader reads this when Dawn creates its instance, so setting it now works.
    process.env.VK_ICD_FILENAMES ??= SWIFTSHADER_ICD;
    tried.push('swiftshader');
    adapter = await instance(create).requestAdapter();
  }
  if (!adapter && prefer === 'hardware') {
    throw new NoAdapterError(
      'NSA_GPU=hardware: the system Vulkan drivers gave no WebGPU adapter. Check the GPU driver (nvidia-smi), ' +
        'that libvulkan.so.1 is on LD_LIBRARY_PATH and that a driver manifest is listed (VK_DRIVER_FILES, e.g. ' +
        '/usr/share/vulkan/icd.d/nvidia_icd.json).',
      { prefer, tried, swiftShaderInstalled, vulkanLoaderOnPath: (process.env.LD_LIBRARY_PATH ?? '') !== '' },
    );
  }
  if (!adapter) {
    const vulkanLoaderOnPath = (process.env.LD_LIBRARY_PATH ?? '').includes('/usr/lib/chromium');
    throw new NoAdapterError(
      'No WebGPU adapter found in Node (Dawn). ' +
        (swiftShaderInstalled
          ? vulkanLoaderOnPath
            ? 'SwiftShader was tried and refused.'
            : 'Run through the npm scripts (they put /usr/lib/chromium, which holds libvulkan.so.1, on LD_LIBRARY_PATH) or install libvulkan1.'
          : "Install a Vulkan driver, or Debian's chromium package for SwiftShader (apt-get install chromium)."),
      { prefer, tried, swiftShaderInstalled, vulkanLoaderOnPath },
    );
  }
  const ctx = await contextFromAdapter(adapter, 'node (dawn)');
  if (prefer === 'hardware' && ctx.adapter.software) {
    ctx.destroy();
    throw new NoAdapterError(
      `NSA_GPU=hardware, but the adapter is a software one (${describeAdapter(ctx.adapter)}): these results would not be GPU figures.`,
      { prefer, tried, swiftShaderInstalled, vulkanLoaderOnPath: true },
    );
  }
  if (ctx.adapter.software) throttleDawnPolling();
  if (opts.announce ?? true) console.error(`[gpu] adapter: ${describeAdapter(ctx.adapter)}`);
  return ctx;
}
