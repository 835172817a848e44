// Threads per row for row-reduction kernels. On a real GPU many lanes hide memory latency; on
// SwiftShader (CPU) every workgroup barrier is a costly switch between emulated invocations, so
// few lanes doing more serial work each run several times faster. Results agree to rounding;
// on one adapter they are deterministic.
import type { GpuContext } from './context';

export function rowLanes(gpu: GpuContext, hardware: number, software: number): number {
  return gpu.adapter.software ? software : hardware;
}
