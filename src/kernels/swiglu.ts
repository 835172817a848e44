// Wrapper for shaders/swiglu.wgsl.
import code from '../../shaders/swiglu.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';

const WG = 256;

export interface SwigluForwardArgs {
  a: BufferSlice;
  b: BufferSlice;
  out: BufferSlice;
  n: number;
}

export interface SwigluBackwardArgs {
  dout: BufferSlice;
  a: BufferSlice;
  b: BufferSlice;
  /** Overwritten. */
  da: BufferSlice;
  /** Overwritten. */
  db: BufferSlice;
  n: number;
}

/** out = silu(a) · b over n floats. No two slices may overlap (WebGPU forbids aliased writable bindings). */
export async function swigluForwardDispatch(gpu: GpuContext, a: SwigluForwardArgs): Promise<Dispatch> {
  const label = 'swiglu.forward';
  checkN(label, a.n);
  checkSlices(label, { a: a.a, b: a.b, out: a.out }, a.n);
  return gpu.dispatch({ code, entryPoint: 'forward', constants: { WG }, label }, [gpu.uniform([a.n]), a.a, a.b, a.out], grid1d(ceilDiv(a.n, WG)));
}

/** da = dout · b · silu'(a), db = dout · silu(a). */
export async function swigluBackwardDispatch(gpu: GpuContext, a: SwigluBackwardArgs): Promise<Dispatch> {
  const label = 'swiglu.backward';
  checkN(label, a.n);
  checkSlices(label, { a: a.a, b: a.b, dout: a.dout, da: a.da, db: a.db }, a.n);
  return gpu.dispatch(
    { code, entryPoint: 'backward', constants: { WG }, label },
    [gpu.uniform([a.n]), a.a, a.b, a.dout, a.da, a.db],
    grid1d(ceilDiv(a.n, WG)),
  );
}

function checkN(label: string, n: number): void {
  if (!Number.isInteger(n) || n < 1) throw new Error(`${label}: n must be a positive integer (got ${n})`);
}

/** Each slice holds n floats; no two overlap. */
function checkSlices(label: string, slices: Record<string, BufferSlice>, n: number): void {
  const list = Object.entries(slices);
  for (const [k, s] of list) {
    if (s.size < n * 4) throw new Error(`${label}: ${k} holds ${s.size} bytes; needs ${n * 4} (${n} elements)`);
  }
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [ka, sa] = list[i];
      const [kb, sb] = list[j];
      if (sa.buffer === sb.buffer && sa.offset < sb.offset + sb.size && sb.offset < sa.offset + sa.size)
        throw new Error(`${label}: ${ka} and ${kb} overlap (WebGPU forbids aliased writable bindings)`);
    }
  }
}
