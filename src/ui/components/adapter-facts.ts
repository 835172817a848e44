// The adapter limits and features that matter to this trainer, as the adapter panel shows them.
import type { AdapterSummary } from '../../gpu/context';
import { formatBytes } from '../format';

export interface LimitRow {
  key: string;
  label: string;
  /** Why it matters here. */
  why: string;
  bytes: boolean;
}

export const KEY_LIMITS: readonly LimitRow[] = [
  { key: 'maxBufferSize', label: 'Max buffer', why: 'largest arena chunk (weights, moments, activations)', bytes: true },
  { key: 'maxStorageBufferBindingSize', label: 'Max storage binding', why: 'largest tensor range one kernel binds', bytes: true },
  { key: 'maxComputeWorkgroupStorageSize', label: 'Workgroup memory', why: 'matmul and attention tiles', bytes: true },
  { key: 'maxComputeInvocationsPerWorkgroup', label: 'Invocations per workgroup', why: 'kernels use at most 256', bytes: false },
  {
    key: 'maxStorageBuffersPerShaderStage',
    label: 'Storage buffers per stage',
    why: 'kernels bind 8; 9 (NSA selected dK and dV in one pass) where allowed',
    bytes: false,
  },
];

export const KEY_FEATURES: ReadonlyArray<{ name: string; why: string }> = [
  { name: 'timestamp-query', why: 'per-kernel GPU timings' },
  { name: 'shader-f16', why: 'half-precision arithmetic in shaders' },
  { name: 'subgroups', why: 'subgroup (warp) operations' },
];

export function limitText(a: AdapterSummary, row: LimitRow): string {
  const v = a.limits[row.key];
  if (typeof v !== 'number') return 'not reported';
  return row.bytes ? `${formatBytes(v)} (${v.toLocaleString('en-US')} bytes)` : v.toLocaleString('en-US');
}

export function hasFeature(a: AdapterSummary, name: string): boolean {
  return a.features.includes(name);
}
