// Argument checks shared by every kernel wrapper: dims, slice sizes and alignment, overlapping
// slices. Every failure is a KernelArgumentError whose message names the kernel label and the
// argument, thrown before any GPU work.
import type { BufferSlice } from './arena';

/** A bad kernel argument: `kernel` is the wrapper's label, `argument` the offending field. */
export class KernelArgumentError extends Error {
  override name = 'KernelArgumentError';
  constructor(
    readonly kernel: string,
    readonly argument: string,
    detail: string,
  ) {
    super(`${kernel}: ${detail}`);
  }
}

/** Throws a KernelArgumentError (`${kernel}: ${detail}`) for `argument`. */
export function argumentError(kernel: string, argument: string, detail: string): never {
  throw new KernelArgumentError(kernel, argument, detail);
}

/** Each dimension is an integer ≥ its minimum: min[k] where given (e.g. 0 for an empty batch), else 1. */
export function checkDims(label: string, dims: Record<string, number>, min: Record<string, number> = {}): void {
  for (const [k, v] of Object.entries(dims)) {
    const lo = min[k] ?? 1;
    if (!Number.isInteger(v) || v < lo) argumentError(label, k, `${k} must be an integer ≥ ${lo} (got ${k} = ${v})`);
  }
}

/** `value` ≤ `max` (e.g. a head dim the registers hold, a workgroup-grid limit); `why` ends the message. */
export function checkMax(label: string, name: string, value: number, max: number, why = ''): void {
  if (value > max) argumentError(label, name, `${name} = ${value} exceeds ${max}${why ? ` ${why}` : ''}`);
}

/**
 * A slice argument: [slice, elements] (4-byte elements); slice may be undefined for an optional
 * argument the call needs (reported as required).
 */
export type SliceArg = readonly [BufferSlice | undefined, number];

export interface SliceCheckOptions {
  /**
   * Pairs of arguments the kernel documents as usable in place (e.g. rope's x and out): they may be
   * the very same slice (same buffer and offset), never partly overlap.
   */
  inPlace?: readonly (readonly [string, string])[];
  /** Arguments read as vec4 (offset must be 16-byte aligned). Others must be 4-byte aligned. */
  vec4?: readonly string[];
  /** Appended to "X is required" for a missing slice (e.g. "for branch sel"). */
  requiredFor?: string;
  /**
   * Pairs that are never bound in the same dispatch and may overlap (e.g. read-only inputs of
   * different passes). Default: every pair is checked.
   */
  mayOverlap?: readonly (readonly [string, string])[];
}

const samePair = (pairs: readonly (readonly [string, string])[] | undefined, a: string, b: string) =>
  !!pairs?.some(([x, y]) => (x === a && y === b) || (x === b && y === a));

export const slicesOverlap = (a: BufferSlice, b: BufferSlice): boolean =>
  a.buffer === b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;

export const sameSlice = (a: BufferSlice, b: BufferSlice): boolean => a.buffer === b.buffer && a.offset === b.offset;

/**
 * Each slice is present, holds its element count and is aligned; no two overlap. Every storage
 * binding is `read_write` (docs/CONVENTIONS.md), so WebGPU rejects two aliased bindings in one
 * dispatch, and a written argument overlapping another would corrupt it: only pairs listed in
 * `inPlace` may be the very same slice.
 */
export function checkSlices(label: string, slices: Record<string, SliceArg>, opts: SliceCheckOptions = {}): void {
  const list: [string, BufferSlice][] = [];
  for (const [k, [s, n]] of Object.entries(slices)) {
    if (!s) argumentError(label, k, `${k} is required${opts.requiredFor ? ` ${opts.requiredFor}` : ''}`);
    if (!Number.isInteger(n) || n < 0) argumentError(label, k, `${k} needs ${n} elements (not a count)`);
    if (s.size < n * 4) argumentError(label, k, `${k} holds ${s.size} bytes, needs ${n * 4} (${n} elements)`);
    const align = opts.vec4?.includes(k) ? 16 : 4;
    if (s.offset % align !== 0) argumentError(label, k, `${k} offset ${s.offset} is not ${align}-byte aligned`);
    list.push([k, s]);
  }
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [ka, sa] = list[i];
      const [kb, sb] = list[j];
      if (!slicesOverlap(sa, sb) || samePair(opts.mayOverlap, ka, kb)) continue;
      if (samePair(opts.inPlace, ka, kb)) {
        if (sameSlice(sa, sb)) continue;
        argumentError(label, kb, `${ka} and ${kb} overlap without being the same slice (in place needs the very same slice)`);
      }
      argumentError(label, kb, `${ka} and ${kb} overlap (storage bindings are read_write: aliased slices are rejected)`);
    }
  }
}
