// NSA_GPU: which WebGPU adapters Node accepts (read without loading Dawn, so CPU code can check it).
/**
 * Which adapters acquireNodeGpu accepts: 'auto' (default) the system GPU, else SwiftShader;
 * 'software' SwiftShader only; 'hardware' the system GPU only, and a software adapter is an error
 * (the offline GPU bundle's test tier must never pass on an emulator). Env: NSA_GPU.
 */
export type GpuPreference = 'auto' | 'software' | 'hardware';

const GPU_PREFERENCES: readonly GpuPreference[] = ['auto', 'software', 'hardware'];

/** NSA_GPU from the environment ('' or unset: 'auto'); any other value is an error naming it. */
export function gpuPreferenceFromEnv(env: NodeJS.ProcessEnv = process.env): GpuPreference {
  const v = env.NSA_GPU ?? '';
  if (v === '') return 'auto';
  if ((GPU_PREFERENCES as readonly string[]).includes(v)) return v as GpuPreference;
  throw new Error(`NSA_GPU must be one of ${GPU_PREFERENCES.join(', ')} (got '${v}')`);
}
