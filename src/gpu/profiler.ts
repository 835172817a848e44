// Per-dispatch GPU time from timestamp queries: each dispatch in its own compute pass with
// beginning/end timestamps. For the bench only (it creates buffers and submits on its own).
import type { Dispatch, GpuContext } from './context';

export interface DispatchTiming {
  label: string;
  ms: number;
}

export async function profileDispatches(gpu: GpuContext, dispatches: readonly Dispatch[]): Promise<DispatchTiming[]> {
  if (!gpu.hasTimestamps) throw new Error('profileDispatches: the adapter has no timestamp-query feature');
  const list = dispatches.filter((d) => d.workgroups[0] * d.workgroups[1] * d.workgroups[2] > 0);
  const n = list.length;
  const querySet = gpu.device.createQuerySet({ type: 'timestamp', count: 2 * n });
  const resolve = gpu.createBuffer({ size: 16 * n, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const staging = gpu.createBuffer({ size: 16 * n, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const enc = gpu.device.createCommandEncoder({ label: 'profile' });
  list.forEach((d, i) => {
    const pass = enc.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } });
    pass.setPipeline(d.pipeline);
    pass.setBindGroup(0, d.bindGroup);
    pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
    pass.end();
  });
  enc.resolveQuerySet(querySet, 0, 2 * n, resolve, 0);
  enc.copyBufferToBuffer(resolve, 0, staging, 0, 16 * n);
  gpu.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const ts = new BigInt64Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  resolve.destroy();
  querySet.destroy();
  return list.map((d, i) => ({ label: d.label, ms: Number(ts[2 * i + 1] - ts[2 * i]) / 1e6 }));
}

/** Sums timings by kernel: the layer prefix (`l3.`) is dropped so all layers add up together. */
export function timingsByKernel(t: readonly DispatchTiming[]): Array<{ kernel: string; ms: number; calls: number }> {
  const m = new Map<string, { ms: number; calls: number }>();
  for (const { label, ms } of t) {
    const k = label.replace(/^l\d+\./, '');
    const e = m.get(k) ?? { ms: 0, calls: 0 };
    e.ms += ms;
    e.calls++;
    m.set(k, e);
  }
  return [...m].map(([kernel, e]) => ({ kernel, ...e })).sort((a, b) => b.ms - a.ms);
}
