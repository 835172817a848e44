// The GPU part of the config fuzz (issue 10): small valid fuzzed configs (tiny and recall presets,
// valid edits only: shapes, NSA options, gate ablations, 53-bit seeds, accumulation) each train 2
// steps on the device with a finite loss and no invalid selection, and the resource footprint
// computed without a GPU matches the arenas the plan allocated.
import { describe, expect, it } from 'vitest';

import { matmulPartsFloats } from '../../src/kernels/matmul';
import { createDataset } from '../../src/train/data/datasets';
import { trainSteps } from '../../src/train/loop';
import { runFootprint } from '../../src/train/resources';
import { Trainer } from '../../src/train/trainer';
import { getGpu } from '../helpers/gpu';
import { fuzzCases, runFuzzCase } from './config-fuzz-cases';

const RUNS = 10;

describe(`config fuzz on the GPU: ${RUNS} small valid configs train 2 steps`, { timeout: 120_000 }, () => {
  it('finite loss, 0 invalid selections, footprint = allocated arenas', async () => {
    const gpu = await getGpu();
    const valid = fuzzCases(77, 200, { onlyValidEdits: true, presets: ['tiny', 'recall'] })
      .map((c) => ({
        c,
        o: runFuzzCase({ ...c, argv: [...c.argv.slice(0, 4), '--steps', '2', '--batch', '2', '--eval-every', '0', ...c.argv.slice(4)] }),
      }))
      .flatMap(({ c, o }) => (o.kind === 'valid' ? [{ c, config: o.config }] : []))
      .slice(0, RUNS);
    expect(valid).toHaveLength(RUNS);
    const attentions = new Set<string>();
    for (const { c, config } of valid) {
      const t0 = performance.now();
      config.train.evalBatches = 0;
      attentions.add(config.model.attention);
      const data = createDataset(
        config.data.source === 'copy'
          ? { kind: 'copy', vocabSize: config.model.vocabSize }
          : { kind: 'random', vocabSize: config.model.vocabSize },
        { batchSize: config.train.batchSize, seqLen: config.model.seqLen, seed: config.train.seed },
      );
      const trainer = await Trainer.create(gpu, config, data);
      const metrics = await trainSteps(trainer, 2);
      const label = c.argv.join(' ');
      expect(
        metrics.map((m) => m.step),
        label,
      ).toEqual([0, 1]);
      for (const m of metrics) {
        expect(Number.isFinite(m.loss), label).toBe(true);
        if (config.model.attention === 'nsa') expect(m.nsa?.invalid, label).toBe(0);
      }
      // The footprint over-counts by at most one alignment pad per arena chunk (5 arenas).
      const estimate = runFootprint(config, matmulPartsFloats(gpu.adapter)).gpuBytes;
      expect(estimate - trainer.plan.gpuBytes, label).toBeGreaterThanOrEqual(0);
      expect(estimate - trainer.plan.gpuBytes, label).toBeLessThan(5 * 256);
      trainer.destroy();
      console.log(`[fuzz-gpu] ${(performance.now() - t0).toFixed(0)} ms: ${label}`);
    }
    expect(attentions).toEqual(new Set(['dense', 'nsa']));
  });
});
