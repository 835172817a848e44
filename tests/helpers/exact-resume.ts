// Bit-for-bit comparisons of training runs (exact resume, the sequence-length warm-up): step
// metrics as their float32 bits, and a run's final weights and AdamW moments tensor by tensor.
import { expect } from 'vitest';

import type { TrainerResumeState } from '../../src/train/trainer';
import type { StepMetrics } from '../../src/train/types';

/** Each step's number with the bits of its loss, gradient norm and learning rate (as float32). */
export const stepBits = (ms: StepMetrics[]) =>
  ms.map((m) => [m.step, ...new Uint32Array(new Float32Array([m.loss, m.gradNorm, m.lr]).buffer)]);

/** The same tensor names in the same order, each with the same bits. */
export function expectSameTensors(a: ReadonlyMap<string, Float32Array>, b: ReadonlyMap<string, Float32Array>, what: string) {
  expect([...a.keys()]).toEqual([...b.keys()]);
  for (const [k, v] of a) expect(new Uint32Array(b.get(k)!.buffer), `${what} ${k}`).toEqual(new Uint32Array(v.buffer));
}

/** A resumed run against the uninterrupted one: the same step bits, weights and AdamW moments. */
export function expectSameRun(
  want: { metrics: StepMetrics[]; end: TrainerResumeState },
  got: { metrics: StepMetrics[]; end: TrainerResumeState },
): void {
  expect(stepBits(got.metrics)).toEqual(stepBits(want.metrics));
  expectSameTensors(want.end.params, got.end.params, 'param');
  expectSameTensors(want.end.adamM, got.end.adamM, 'adam m');
  expectSameTensors(want.end.adamV, got.end.adamV, 'adam v');
}
