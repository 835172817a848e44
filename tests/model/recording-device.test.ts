// The recording stand-in device (src/gpu/recording-device.ts), which npm run gpu:plan builds the
// real plan and decoder on without a GPU, records the same dispatches as the real adapter: for the
// tiny preset, dense and NSA, the training step's and the decode step's labels and grids equal, in
// order, those of the same plan and decoder built on this adapter (the stand-in given its summary
// and limits, so both take the same variants and tilings). So the report cannot drift from the plan.
import { describe, expect, it } from 'vitest';

import { GpuDecoder } from '../../src/decode/gpu-decoder';
import type { Dispatch } from '../../src/gpu/context';
import { RecordingGpu } from '../../src/gpu/recording-device';
import { ModelPlan } from '../../src/model/plan';
import { preset } from '../../src/train/presets/presets';
import { getGpu } from '../helpers/gpu';
import { NO_OPTIMIZER } from '../helpers/models';

const grid = (list: readonly Dispatch[]) => list.map((d) => `${d.label} ${d.workgroups.join('×')}`);

describe('the recording device records what the real adapter runs (tiny preset: labels and grids equal)', () => {
  for (const attention of ['dense', 'nsa'] as const) {
    it(attention, async () => {
      const gpu = await getGpu();
      const config = { ...preset('tiny').model, attention };
      const options = { batchSize: 2, gradAccum: 1, optimizer: NO_OPTIMIZER };
      const rec = new RecordingGpu({ ...gpu.adapter, limits: { ...gpu.adapter.limits } });
      const [real, recorded] = await Promise.all([ModelPlan.build(gpu, config, options), ModelPlan.build(rec.gpu, config, options)]);
      expect(grid(recorded.stepDispatches())).toEqual(grid(real.stepDispatches()));
      const [realDec, recDec] = await Promise.all([
        GpuDecoder.create(gpu, config, { batch: 2 }),
        GpuDecoder.create(rec.gpu, config, { batch: 2 }),
      ]);
      expect(grid(recDec.dispatches)).toEqual(grid(realDec.dispatches));
      // Every recorded dispatch is described: its kernel, entry point and workgroup size.
      for (const d of [...recorded.stepDispatches(), ...recDec.dispatches]) {
        const x = rec.describe(d);
        expect(x.kernel).not.toBe('?');
        expect(x.workgroupSize.every((n) => Number.isInteger(n) && n >= 1)).toBe(true);
      }
      real.destroy();
      realDec.destroy();
    });
  }
});
