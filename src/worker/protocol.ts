// Types exchanged between the page and the trainer worker (all structured-cloneable).
import type { AdapterSummary } from '../gpu/context';
import type { Heartbeat, StepMetrics } from '../train/types';

export type AdapterProbe = { ok: true; adapter: AdapterSummary } | { ok: false; message: string };

export interface InitInfo {
  adapter: AdapterSummary;
  /** Characters of corpus text the dataset was built from. */
  corpusChars: number;
}

/** One batched message from a running train() call (at most 10 per second). */
export interface TrainUpdate {
  /** New step metrics since the previous update, in step order. */
  metrics: StepMetrics[];
  /** The latest heartbeat since the previous update, if any. */
  heartbeat: Heartbeat | null;
}

export type TrainEnd = 'done' | 'paused' | 'stopped';

export interface TrainResult {
  end: TrainEnd;
  stepsDone: number;
  last: StepMetrics | null;
}

/** At most this many TrainUpdate messages per second reach the page. */
export const MAX_UPDATES_PER_SECOND = 10;
