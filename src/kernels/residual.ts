// Wrapper for shaders/residual.wgsl.
import code from '../../shaders/residual.wgsl?raw';
import type { BufferSlice } from '../gpu/arena';
import type { Dispatch, GpuContext } from '../gpu/context';
import { ceilDiv, grid1d } from '../gpu/grid';

const WG = 256;

/** out[i] = a[i] + b[i] for i < n. `out` may alias `a` or `b` only if it is read_write-safe (it is: elementwise). */
export function addDispatch(gpu: GpuContext, a: BufferSlice, b: BufferSlice, out: BufferSlice, n: number): Promise<Dispatch> {
  return gpu.dispatch({ code, entryPoint: 'add', constants: { WG }, label: 'residual.add' }, [gpu.uniform([n]), a, b, out], grid1d(ceilDiv(n, WG)));
}
