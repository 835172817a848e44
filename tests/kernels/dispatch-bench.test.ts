// npm run bench's `dispatch` line (src/kernels/dispatch-bench.ts): a chain of dependent dispatches
// in one pass, timed at two lengths. Only what can be checked on any adapter: the chain computes
// the gradient norm's finalize (its output is still the norm of the 1-float gradient), the times
// are positive, not rounded to Dawn's 65.5 µs, and the longer chain is not faster than one
// dispatch. The figure itself is a report.
import { describe, expect, it } from 'vitest';

import { benchDispatch } from '../../src/kernels/dispatch-bench';
import { getGpu } from '../helpers/gpu';

describe('the per-dispatch cost bench', () => {
  it('times 1 and 256 dependent dispatches; the long pass is the slower; the per-dispatch figure follows from the two', async () => {
    const gpu = await getGpu();
    const r = await benchDispatch(gpu, 256, 3);
    expect(r.dispatches).toBe(256);
    expect(r.shortMs).toBeGreaterThan(0);
    expect(r.longMs).toBeGreaterThan(r.shortMs);
    expect(r.usPerDispatch).toBeCloseTo(((r.longMs - r.shortMs) * 1e3) / 255, 9);
    expect(r.timer).toBe(gpu.hasTimestamps ? 'timestamp-query' : 'wall');
    // Raw timestamps (src/gpu/node-device.ts DAWN_FLAGS): Dawn's default rounds them to multiples of
    // 65,536 ns, and both chains would read as such.
    if (r.timer === 'timestamp-query') {
      const quantized = (ms: number) => Math.round(ms * 1e6) % 65536 === 0;
      expect([quantized(r.shortMs), quantized(r.longMs)]).not.toEqual([true, true]);
    }
    expect(gpu.reports).toEqual([]);
  });
});
