// The training stream every dataset draws its batches from: a seeded mulberry32 stream that can
// jump. mulberry32 is counter based — its 32-bit state advances by a fixed constant per draw and
// the output is a hash of the state — so the state after d draws is seedWord(seed) + d·0x6d2b79f5
// (mod 2^32), and a fresh mulberry32 seeded with that word continues the stream from draw d. Every
// dataset draws a fixed number of values per batch (drawsPerBatch), so batch i starts at draw
// i·drawsPerBatch: seek(i) is O(1) whatever the cursor, and the bits are those of drawing batches
// 0 … i−1 one by one (the same stream as before seeking existed: runs and goldens keep their bits).
import { mulberry32, seedWord } from '../../util/random';

/** mulberry32's state increment per draw. */
const MULBERRY32_STEP = 0x6d2b79f5;
/** The largest data cursor accepted: 2^53 batches (every integer up to it is exact in a double). */
export const MAX_TRAIN_CURSOR = 2 ** 53;

/** The mulberry32 state word after `batch`·`drawsPerBatch` draws of the stream seeded with `seed` (exact mod 2^32). */
export function streamWordAt(seed: number, batch: number, drawsPerBatch: number): number {
  const batchLow = batch % 4294967296; // exact for every integer ≤ 2^53
  const draws = Math.imul(batchLow >>> 0, drawsPerBatch >>> 0); // (batch·drawsPerBatch) mod 2^32
  return (seedWord(seed) + Math.imul(draws, MULBERRY32_STEP)) >>> 0;
}

/** Why `cursor` cannot be a training-stream position (naming `field`), or null when it can. */
export function trainCursorProblem(field: string, cursor: unknown): string | null {
  if (typeof cursor !== 'number' || !Number.isInteger(cursor)) return `${field} must be an integer (got ${String(cursor)})`;
  if (cursor < 0) return `${field} must be ≥ 0 (got ${cursor})`;
  if (cursor > MAX_TRAIN_CURSOR) return `${field} must be ≤ 2^53 = ${MAX_TRAIN_CURSOR} (got ${cursor})`;
  return null;
}

/**
 * A dataset's training stream: draw(fill) hands `fill` the generator for the next batch and checks
 * it took exactly drawsPerBatch values (a generator that drew a varying number could not seek);
 * seek(i) makes the next draw batch i.
 */
export class TrainStream {
  private rand: () => number;
  private batch = 0;

  constructor(
    private readonly seed: number,
    readonly drawsPerBatch: number,
    private readonly name: string,
  ) {
    if (!(Number.isSafeInteger(drawsPerBatch) && drawsPerBatch >= 1))
      throw new RangeError(`dataset ${name}: drawsPerBatch must be a positive integer (got ${drawsPerBatch})`);
    this.rand = mulberry32(seedWord(seed));
  }

  /** The index of the next batch drawn. */
  get position(): number {
    return this.batch;
  }

  draw(fill: (rand: () => number) => void): void {
    const rand = this.rand;
    let n = 0;
    fill(() => {
      n++;
      return rand();
    });
    if (n !== this.drawsPerBatch)
      throw new Error(
        `dataset ${this.name}: batch ${this.batch} drew ${n} random values, expected ${this.drawsPerBatch} (the stream could not seek)`,
      );
    this.batch++;
  }

  /** Positions the stream so the next draw is batch `batch` (0-based), in O(1). */
  seek(batch: number): void {
    const problem = trainCursorProblem('batchesDrawn', batch);
    if (problem) throw new RangeError(`dataset ${this.name}: ${problem}`);
    this.rand = mulberry32(streamWordAt(this.seed, batch, this.drawsPerBatch));
    this.batch = batch;
  }
}
