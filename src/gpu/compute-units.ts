// How many workgroups a GPU runs at once, roughly: its SM (NVIDIA), compute-unit (AMD) or core
// (Apple) count. WebGPU does not report it, so kernels that split work to fill the GPU (matmul's
// split over K) read it from here: the adapter summary's `computeUnits` where the caller set it
// (npm run gpu:plan's stand-in sets the named GPU's SM count), else a match of the adapter's
// description and device names against a few known GPUs, else DEFAULT_COMPUTE_UNITS for a
// hardware adapter. A software adapter (SwiftShader) gets 0: nothing is split for it.
import type { AdapterSummary } from './context';

/** Hardware adapters that name no known GPU (Chrome reports no device name): an H100-class count. */
export const DEFAULT_COMPUTE_UNITS = 132;

/** Workgroups per compute unit a split aims for (the under-fill flag of npm run gpu:plan uses the same factor). */
export const FILL_FACTOR = 4;

/**
 * What one dispatch costs at least, µs: a kernel launch and the barrier before the next dependent
 * dispatch in the compute pass. CUDA documents launches of a few µs; Dawn on Vulkan adds its own
 * work per dispatch. An assumption until a GPU run measures it (npm run bench's `dispatch` line). A dispatch whose fill-limited time is
 * below it is launch-bound: more workgroups would not make it faster, fewer dispatches would.
 */
export const LAUNCH_US = 2;

const KNOWN: ReadonlyArray<readonly [RegExp, number]> = [
  [/\bg?h(100|200)\b/i, 132],
  [/\ba100\b/i, 108],
  [/\brtx\s*4090\b/i, 128],
  [/\brtx\s*3090\b/i, 82],
  [/\bapple\s*m[1-4]\b/i, 10],
];

export function computeUnits(adapter: AdapterSummary): number {
  if (adapter.software) return 0;
  if (adapter.computeUnits !== undefined) return adapter.computeUnits;
  const name = `${adapter.description} ${adapter.device}`;
  for (const [re, units] of KNOWN) if (re.test(name)) return units;
  return DEFAULT_COMPUTE_UNITS;
}

/** The workgroups a dispatch needs to fill the adapter's GPU (FILL_FACTOR per compute unit); 0 on software. */
export function fillTarget(adapter: AdapterSummary): number {
  return FILL_FACTOR * computeUnits(adapter);
}
