// The page's checkpoint on the real GPU path (Dawn): a PlaygroundRun trained 4 steps writes the
// CLI's checkpoint file; a run created from those bytes trains 4 more, bit for bit the steps of a
// run trained 8 steps straight, with the first run's metrics and evaluations at the head of its log.
// A broken file is refused with a message naming the file and the field.
import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { decodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import type { RunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { EvalMetrics, StepMetrics } from '../../src/train/types';
import type { InitRequest, TrainUpdate } from '../../src/worker/protocol';
import { checkpointData, PlaygroundRun } from '../../src/worker/run';
import { getGpu } from '../helpers/gpu';
import { nsaTestModel } from '../helpers/models';

// The model of tests/worker/run.test.ts and tests/model/one-step-nsa.test.ts: the pipelines are shared.
const model: ModelConfig = nsaTestModel(19);
const config: RunConfig = {
  model,
  train: { ...preset('tiny').train, steps: 8, batchSize: 2, warmupSteps: 2, evalEvery: 3, evalBatches: 1 },
  data: { source: 'random', tokenizer: 'byte' },
};
const request: InitRequest = { config, data: { kind: 'random' }, pageUrl: 'http://x/', snapshotEvery: 0 };
const noBrown = async (): Promise<string> => {
  throw new Error('Brown must not be fetched for a random-token run');
};

async function train(run: PlaygroundRun, steps: number): Promise<{ metrics: StepMetrics[]; evals: EvalMetrics[] }> {
  const updates: TrainUpdate[] = [];
  await run.train(steps, (u) => updates.push(u));
  return { metrics: updates.flatMap((u) => u.metrics), evals: updates.flatMap((u) => u.evals) };
}

/** Loss and gradient norm per step, as bits (Object.is: NaN equals NaN, −0 differs from 0). */
const bits = (ms: StepMetrics[]) => ms.map((m) => ({ step: m.step, loss: m.loss, gradNorm: m.gradNorm }));

describe('PlaygroundRun checkpoint (GPU)', () => {
  it('checkpoint() after 4 steps, a new run from its bytes, 4 more steps = 8 steps straight, bit for bit', async () => {
    const gpu = await getGpu();
    const straight = await PlaygroundRun.create(gpu, request, noBrown);
    const all = await train(straight, 8);
    await straight.stop();
    expect(all.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    const first = await PlaygroundRun.create(gpu, request, noBrown);
    const head = await train(first, 4);
    const resumedAt = 4;
    const bytes = await first.checkpoint(new Date('2026-01-02T03:04:05Z'));
    await first.stop();
    expect(bits(head.metrics)).toEqual(bits(all.metrics.slice(0, 4)));

    // The file is the CLI's format: config, step, cursor, every metric so far, reason 'page'.
    const decoded = decodeCheckpoint(bytes.slice(), { file: 'page.safetensors' });
    expect(decoded.config).toEqual(config);
    expect(decoded.state.stepsDone).toBe(resumedAt);
    expect(decoded.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    expect(decoded.evals.map((e) => e.step)).toEqual([3]);
    expect([decoded.reason, decoded.savedAt]).toEqual(['page', '2026-01-02T03:04:05.000Z']);

    // The page's config is replaced by the checkpoint's; its data is rebuilt from it.
    const other: RunConfig = { ...config, train: { ...config.train, steps: 3, seed: 99 }, data: { source: 'brown', tokenizer: 'byte' } };
    const resumed = await PlaygroundRun.create(
      gpu,
      { ...request, config: other, data: { kind: 'brown' }, snapshotEvery: 7, checkpoint: bytes, checkpointFile: 'page.safetensors' },
      noBrown,
    );
    const info = resumed.info;
    expect(info.config).toEqual(config);
    expect(info.stepsDone).toBe(resumedAt);
    expect(info.metrics.map((m) => m.step)).toEqual([0, 1, 2, 3]);
    expect(info.evals.map((e) => e.step)).toEqual([3]);
    expect(info.snapshotCapacity).toBeGreaterThan(0); // NSA: snapshots on, at the checkpoint config's rate
    const tail = await train(resumed, 8 - resumedAt);
    expect(bits(tail.metrics)).toEqual(bits(all.metrics.slice(resumedAt)));
    expect(tail.metrics.map((m) => m.lr)).toEqual(all.metrics.slice(resumedAt).map((m) => m.lr));
    expect(tail.evals).toEqual(all.evals.filter((e) => e.step > resumedAt));

    // The log holds the whole run: every step and evaluation, the checkpoint's first.
    const rows = resumed
      .exportFiles()
      .metricsCsv.trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    expect(rows.filter((r) => r[1] !== '').map((r) => Number(r[0]))).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(rows.filter((r) => r[2] !== '').map((r) => Number(r[0]))).toEqual([3, 6, 8]);
    const again = decodeCheckpoint(await resumed.checkpoint(), { file: 'again.safetensors' });
    expect(again.state.stepsDone).toBe(8);
    expect(bits(again.metrics)).toEqual(bits(all.metrics));
    expect(again.evals.map((e) => e.valLoss)).toEqual(all.evals.map((e) => e.valLoss));
    await resumed.stop();
  });

  it('a broken checkpoint is refused naming the file and the field; an upload-trained one asks for the text', async () => {
    const gpu = await getGpu();
    const run = await PlaygroundRun.create(gpu, { ...request, config: { ...config, train: { ...config.train, steps: 2 } } }, noBrown);
    // Not while a train() call runs (counted from the call, before it starts stepping).
    const busy = run.train(1, () => {});
    await expect(run.checkpoint()).rejects.toThrow(/Pause the run/);
    await busy;
    const bytes = await run.checkpoint();
    await run.stop();
    await expect(run.checkpoint()).rejects.toThrow(/stopped/);

    // Corrupt the format tag inside the JSON header: its digest no longer matches.
    const broken = bytes.slice();
    const at = Buffer.from(broken.buffer, broken.byteOffset, broken.byteLength).indexOf('nsa-playground-checkpoint');
    expect(at).toBeGreaterThan(0);
    broken[at] = 'x'.charCodeAt(0);
    const create = (b: Uint8Array, extra: Partial<InitRequest> = {}) =>
      PlaygroundRun.create(gpu, { ...request, checkpoint: b, checkpointFile: 'mine.safetensors', ...extra }, noBrown);
    await expect(create(broken)).rejects.toThrow(/^mine\.safetensors: __metadata__\.format: its XXH32 is [0-9a-f]{8}, the header's digest/);
    await expect(create(bytes.slice(0, 5))).rejects.toThrow(/^mine\.safetensors: header length/);

    // An uploaded text is not in the checkpoint: the page must offer the same file.
    const uploaded: RunConfig = { ...config, data: { source: 'upload', tokenizer: 'byte' } };
    expect(() => checkpointData(uploaded, { kind: 'random' }, 'mine.safetensors')).toThrow(
      /^mine\.safetensors was trained on an uploaded text file.*pick that same \.txt file first/,
    );
    const text = { kind: 'upload', name: 'a.txt', text: 'abc' } as const;
    expect(checkpointData(uploaded, text, 'mine.safetensors')).toBe(text);
    expect(checkpointData({ ...config, data: { source: 'brown', tokenizer: 'byte' } }, text, 'f')).toEqual({ kind: 'brown' });
  });
});
