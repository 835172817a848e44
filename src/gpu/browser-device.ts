// Device acquisition in the browser (page or worker).
import { contextFromAdapter, type GpuContext } from './context';

/** Why WebGPU cannot be used here: the API is missing, or it found no adapter. */
export type WebGpuUnavailableReason = 'no-navigator-gpu' | 'no-adapter';

export class WebGpuUnavailableError extends Error {
  override readonly name: string = 'WebGpuUnavailableError';
  /** 'no-navigator-gpu': navigator.gpu is missing; 'no-adapter': requestAdapter() returned null. */
  readonly reason: WebGpuUnavailableReason;

  constructor(reason: WebGpuUnavailableReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

export async function acquireBrowserGpu(): Promise<GpuContext> {
  const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
  if (!gpu) {
    throw new WebGpuUnavailableError(
      'no-navigator-gpu',
      'WebGPU is not available in this browser (navigator.gpu is missing). It needs a secure context ' +
        '(https or localhost) and a browser with WebGPU: Chrome/Edge 113+, or on Linux Chrome started with ' +
        '--enable-unsafe-webgpu --enable-features=Vulkan, Firefox 141+ on Windows, Safari 26+.',
    );
  }
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) {
    throw new WebGpuUnavailableError(
      'no-adapter',
      'WebGPU is present but no adapter was found. Check chrome://gpu: the GPU may be blocklisted ' +
        '(try --enable-unsafe-webgpu, and on Linux --enable-features=Vulkan) or the driver may be missing.',
    );
  }
  return contextFromAdapter(adapter, 'browser');
}
