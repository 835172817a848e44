// Large 1-D grids: WebGPU allows at most 65,535 workgroups per dimension, so a long 1-D launch is
// folded into 2-D. Kernels recover the linear index as wid.x + wid.y * num_workgroups.x.
export function grid1d(workgroups: number, maxPerDim = 65535): [number, number] {
  if (workgroups <= maxPerDim) return [workgroups, 1];
  const y = Math.ceil(workgroups / maxPerDim);
  return [Math.ceil(workgroups / y), y];
}

export const ceilDiv = (a: number, b: number): number => Math.ceil(a / b);
