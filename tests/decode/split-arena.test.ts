// The decoder on an adapter whose small buffer limits split the parameter arena over several
// buffers (recorded on the stand-in device, no GPU): a layer's projection group whose weights
// straddle two buffers runs as one group per buffer, and w1 and w3 in different buffers fall back
// to two products and the SwiGLU kernel. (Before, such a decoder failed to build: a group binds its
// weights as one span.) m7c-125m, whose embedding alone is 147 MiB.
import { describe, expect, it } from 'vitest';

import { GpuDecoder } from '../../src/decode/gpu-decoder';
import { NVIDIA_ADAPTER, RecordingGpu } from '../../src/gpu/recording-device';
import { preset } from '../../src/train/presets/presets';

const MiB = 1 << 20;

async function labels(attention: 'nsa' | 'dense', mib: number): Promise<string[]> {
  const limits = { ...NVIDIA_ADAPTER.limits, maxBufferSize: mib * MiB, maxStorageBufferBindingSize: mib * MiB };
  const rec = new RecordingGpu({ ...NVIDIA_ADAPTER, limits });
  const decoder = await GpuDecoder.create(rec.gpu, { ...preset('m7c-125m').model, attention });
  return decoder.dispatches.map((d) => rec.describe(d).label);
}

describe('decoder over a split parameter arena (small buffer limits)', () => {
  it('200 MiB buffers, NSA: a projection group straddling two buffers runs as two groups', async () => {
    const l = await labels('nsa', 200);
    const split = l.filter((x) => / q k v gates \(\d of 2\) (part|combine)$/.test(x));
    expect(split.length).toBeGreaterThan(0);
    expect(split.length % 4).toBe(0);
    // Otherwise the step is the one-buffer step: 4 + 12 × 25 dispatches (the selection is 3 on a GPU)
    // plus 2 per split group.
    expect(l.length).toBe(4 + 12 * 25 + split.length / 2);
  });

  it('160 MiB buffers, dense: w1 and w3 in different buffers run as two products and the SwiGLU kernel', async () => {
    const l = await labels('dense', 160);
    const i = l.findIndex((x) => / w1 part$/.test(x));
    expect(i).toBeGreaterThan(0);
    expect(l.slice(i, i + 5).map((x) => x.replace(/^decode L\d+ /, ''))).toEqual([
      'w1 part',
      'w1 combine',
      'w3 part',
      'w3 combine',
      'swiglu.forward',
    ]);
    expect(l.filter((x) => / w1 w3 swiglu part$/.test(x)).length).toBe(11);
  });
});
