// A bounded history of selection snapshots. The n-th snapshot offered is kept when n is a multiple
// of the stride; when that overflows the capacity the stride doubles and every other kept one
// goes, so what is kept stays spread evenly over the whole run. The newest is always kept too
// (until the next one replaces it, when it is off the stride).

/** Memory the kept snapshots may take in the worker. */
export const SNAPSHOT_BUDGET_BYTES = 64 * 2 ** 20;
/** Most snapshots kept, however small. */
export const MAX_SNAPSHOTS = 128;

/** How many snapshots of `bytesEach` fit the budget (at least 2: the first and the newest). */
export function snapshotCapacity(bytesEach: number, budget = SNAPSHOT_BUDGET_BYTES, max = MAX_SNAPSHOTS): number {
  if (!(bytesEach > 0)) throw new RangeError(`snapshot size must be positive (got ${bytesEach})`);
  return Math.max(2, Math.min(max, Math.floor(budget / bytesEach)));
}

interface Kept<T> {
  n: number;
  item: T;
}

export class SnapshotHistory<T extends { step: number }> {
  private items: Kept<T>[] = [];
  private offered = 0;
  private stride = 1;

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 2)) throw new RangeError(`capacity must be an integer ≥ 2 (got ${capacity})`);
  }

  /** Adds a snapshot (steps must increase); thins the older ones when full. */
  add(item: T): void {
    const last = this.items.at(-1);
    if (last && item.step <= last.item.step) throw new Error(`snapshot steps must increase (${item.step} after ${last.item.step})`);
    if (last && last.n % this.stride !== 0) this.items.pop(); // the previous newest, off the stride
    this.items.push({ n: this.offered++, item });
    while (this.items.length > this.capacity) {
      this.stride *= 2;
      const newest = this.items.at(-1)!;
      this.items = this.items.filter((k) => k.n % this.stride === 0 || k === newest);
    }
  }

  get steps(): number[] {
    return this.items.map((k) => k.item.step);
  }

  get size(): number {
    return this.items.length;
  }

  /** The snapshot taken at `step`, or null when none is kept for it. */
  at(step: number): T | null {
    return this.items.find((k) => k.item.step === step)?.item ?? null;
  }

  clear(): void {
    this.items = [];
    this.offered = 0;
    this.stride = 1;
  }
}
