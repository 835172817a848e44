// The one training loop (src/train/loop.ts) on a fake step source with the Trainer's contract:
// metrics one step late, each returned once. Every step's metrics exactly once and in order,
// checkpoints only with nothing in flight, early stop with the tail flushed, errors passed through.
import { describe, expect, it } from 'vitest';

import { type StepSource, type TrainEvent, trainingLoop, trainSteps } from '../../src/train/loop';
import type { StepMetrics } from '../../src/train/types';

class FakeSource implements StepSource {
  stepsDone = 0;
  inFlight: number[] = [];
  failAt = -1;

  private metrics(step: number): StepMetrics {
    if (step === this.failAt) throw new Error(`boom at ${step}`);
    return { step, loss: 1 / (step + 1), lr: 1e-3, gradNorm: 1, tokensPerSecond: 1, stepMs: 1, elapsedMs: step };
  }

  async step(): Promise<StepMetrics[]> {
    this.inFlight.push(this.stepsDone++);
    return this.inFlight.length > 1 ? [this.metrics(this.inFlight.shift()!)] : [];
  }

  async flush(): Promise<StepMetrics[]> {
    const out = this.inFlight.map((s) => this.metrics(s));
    this.inFlight = [];
    return out;
  }
}

async function collect(src: FakeSource, o: Parameters<typeof trainingLoop>[1], onEvent?: (e: TrainEvent) => void): Promise<TrainEvent[]> {
  const out: TrainEvent[] = [];
  for await (const e of trainingLoop(src, o)) {
    onEvent?.(e);
    out.push(e);
  }
  return out;
}

const describeEvents = (es: TrainEvent[]) => es.map((e) => (e.kind === 'step' ? e.metrics.step : `cp${e.stepsDone}`));

describe('trainingLoop', () => {
  it('yields every step once, in order, and checkpoints with nothing in flight', async () => {
    const src = new FakeSource();
    const inFlightAtCheckpoint: number[] = [];
    const events = await collect(src, { until: 7, checkpointAfter: (n) => n % 3 === 0 }, (e) => {
      if (e.kind === 'checkpoint') inFlightAtCheckpoint.push(src.inFlight.length);
    });
    expect(describeEvents(events)).toEqual([0, 1, 2, 'cp3', 3, 4, 5, 'cp6', 6]);
    expect(inFlightAtCheckpoint).toEqual([0, 0]);
    expect(src.inFlight).toEqual([]);
  });

  it('continues from where the source is (until counts all steps done), and 0 steps left yields nothing', async () => {
    const src = new FakeSource();
    expect((await trainSteps(src, 2)).map((m) => m.step)).toEqual([0, 1]);
    expect((await trainSteps(src, 5)).map((m) => m.step)).toEqual([2, 3, 4]);
    expect(await trainSteps(src, 5)).toEqual([]);
    await expect(trainSteps(src, -1)).rejects.toThrow(/until must be an integer ≥ 0/);
  });

  it('stops early when asked, still flushing the step in flight', async () => {
    const src = new FakeSource();
    const events = await collect(src, { until: 100, shouldStop: () => src.stepsDone >= 4 });
    expect(describeEvents(events)).toEqual([0, 1, 2, 3]);
    expect(src.stepsDone).toBe(4);
  });

  it('awaits beforeStep before each step and re-checks the stop flag after it', async () => {
    const src = new FakeSource();
    let stop = false;
    let calls = 0;
    const events = await collect(src, {
      until: 10,
      shouldStop: () => stop,
      beforeStep: async () => {
        calls++;
        if (calls === 3) stop = true;
      },
    });
    expect(describeEvents(events)).toEqual([0, 1]);
    expect(calls).toBe(3);
  });

  it('passes a source error through after the good steps', async () => {
    const src = new FakeSource();
    src.failAt = 3;
    const seen: number[] = [];
    await expect(collect(src, { until: 10 }, (e) => e.kind === 'step' && seen.push(e.metrics.step))).rejects.toThrow(/boom at 3/);
    expect(seen).toEqual([0, 1, 2]);
  });

  it('fails loudly on a source that repeats or reorders metrics', async () => {
    const src = new FakeSource();
    src.flush = async () => [{ step: 0, loss: 1, lr: 0, gradNorm: 0, tokensPerSecond: 0, stepMs: 0, elapsedMs: 0 }];
    await expect(trainSteps(src, 3)).rejects.toThrow(/step 0 reported after step 1/);
  });
});
