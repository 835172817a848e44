// Argument checks shared by kernel wrappers: every message names the wrapper and the field.
import type { BufferSlice } from './arena';

/** Each dimension is an integer ≥ its minimum: min[k] where given (e.g. 0 for an empty batch), else 1. */
export function checkDims(label: string, dims: Record<string, number>, min: Record<string, number> = {}): void {
  for (const [k, v] of Object.entries(dims)) {
    const lo = min[k] ?? 1;
    if (!Number.isInteger(v) || v < lo) throw new Error(`${label}: ${k} must be an integer ≥ ${lo} (got ${k} = ${v})`);
  }
}

/** Each slice holds its element count (4-byte elements); no two bound slices overlap (WebGPU rejects aliased writable bindings). */
export function checkSlices(label: string, slices: Record<string, [BufferSlice, number]>): void {
  const list = Object.entries(slices);
  for (const [k, [s, n]] of list) {
    if (s.size < n * 4) throw new Error(`${label}: ${k} holds ${s.size} bytes; needs ${n * 4} (${n} elements)`);
  }
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [ka, [sa]] = list[i];
      const [kb, [sb]] = list[j];
      if (sa.buffer === sb.buffer && sa.offset < sb.offset + sb.size && sb.offset < sa.offset + sa.size)
        throw new Error(`${label}: ${ka} and ${kb} overlap (WebGPU forbids aliased writable bindings)`);
    }
  }
}
