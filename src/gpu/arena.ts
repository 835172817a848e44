// One logical arena per role (parameters, gradients, moments, activations): tensors are laid out
// at init, 256-byte aligned, and packed into as few GPU buffers as the adapter's limits allow.
import type { GpuContext } from './context';

export interface BufferSlice {
  readonly buffer: GPUBuffer;
  /** Byte offset into buffer, a multiple of 256. */
  readonly offset: number;
  /** Byte size (may be 0-padded to 4). */
  readonly size: number;
}

export interface ArenaEntry {
  readonly name: string;
  readonly bytes: number;
}

export const SLICE_ALIGN = 256;

/** Places one float32 tensor of `floats` elements in a layout function. */
export type PlaceTensor = (name: string, floats: number) => BufferSlice;

const UNRESOLVED: BufferSlice = { buffer: undefined as unknown as GPUBuffer, offset: 0, size: 0 };

/**
 * The arena entries a layout function places, in order. A layout is written once, as a function
 * of `place`, and run twice: here to size the arena, then by resolveLayout over the arena, so a
 * tensor's name and size are stated in one place. The slices it sees here are placeholders.
 */
export function layoutEntries(layout: (place: PlaceTensor) => unknown): ArenaEntry[] {
  const entries: ArenaEntry[] = [];
  layout((name, floats) => {
    entries.push({ name, bytes: 4 * floats });
    return UNRESOLVED;
  });
  return entries;
}

/**
 * The layout's tensors over an arena made from its layoutEntries: the one place a tensor is looked
 * up by name (tests/architecture/typed-tables.test.ts fails on any other arena look-up in src/).
 */
export function resolveLayout<T>(layout: (place: PlaceTensor) => T, arena: Arena): T {
  return layout((name) => arena.get(name));
}

/**
 * An arena laid out by one layout function and the layout's typed table over it (layoutEntries,
 * createArena and resolveLayout in one): callers reach tensors by field, never by name.
 */
export function createLayoutArena<T>(
  gpu: GpuContext,
  label: string,
  layout: (place: PlaceTensor) => T,
  usage?: GPUBufferUsageFlags,
): { arena: Arena; tensors: T } {
  const arena = createArena(gpu, label, layoutEntries(layout), usage);
  return { arena, tensors: resolveLayout(layout, arena) };
}
const alignUp = (x: number, a: number) => Math.ceil(x / a) * a;

export interface Arena {
  readonly label: string;
  readonly buffers: readonly GPUBuffer[];
  readonly totalBytes: number;
  get(name: string): BufferSlice;
  has(name: string): boolean;
  /** Entries in layout order with their slices. */
  entries(): ReadonlyArray<{ name: string; slice: BufferSlice }>;
}

/**
 * Lays out entries in order, starting a new buffer when the next entry would push the current one
 * past `maxBytes` (min of maxBufferSize and maxStorageBufferBindingSize). Zero-size entries get a
 * 4-byte slice so they can still be bound.
 */
export function createArena(
  gpu: GpuContext,
  label: string,
  entries: readonly ArenaEntry[],
  usage: GPUBufferUsageFlags = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
): Arena {
  const maxBytes = Math.min(gpu.device.limits.maxBufferSize, gpu.device.limits.maxStorageBufferBindingSize);
  const layout: { name: string; chunk: number; offset: number; size: number }[] = [];
  const chunkSizes: number[] = [0];
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.name)) throw new Error(`arena ${label}: duplicate entry ${e.name}`);
    seen.add(e.name);
    const size = alignUp(Math.max(4, e.bytes), 4);
    if (size > maxBytes) throw new Error(`arena ${label}: ${e.name} needs ${size} bytes; the adapter allows ${maxBytes} per buffer`);
    let chunk = chunkSizes.length - 1;
    let offset = alignUp(chunkSizes[chunk], SLICE_ALIGN);
    if (offset + size > maxBytes) {
      chunkSizes.push(0);
      chunk++;
      offset = 0;
    }
    chunkSizes[chunk] = offset + size;
    layout.push({ name: e.name, chunk, offset, size });
  }
  const buffers = chunkSizes.map((bytes, i) => gpu.createBuffer({ label: `${label}#${i}`, size: alignUp(Math.max(bytes, 16), 16), usage }));
  const slices = new Map<string, BufferSlice>();
  for (const l of layout) slices.set(l.name, { buffer: buffers[l.chunk], offset: l.offset, size: l.size });
  return {
    label,
    buffers,
    totalBytes: chunkSizes.reduce((a, b) => a + b, 0),
    get(name) {
      const s = slices.get(name);
      if (!s) throw new Error(`arena ${label}: no entry ${name}`);
      return s;
    },
    has: (name) => slices.has(name),
    entries: () => layout.map((l) => ({ name: l.name, slice: slices.get(l.name)! })),
  };
}
