// The charts of a shared result, as the shared-result view and the standalone result page both draw
// them: the same series (src/ui/charts/series.ts, smoothed alike), names and colours; a task's
// accuracy with its chance line and the evaluation's sampling band.
import type { RunConfig } from '../../train/config';
import type { EvalMetrics, StepMetrics } from '../../train/types';
import { bandLabel, taskChanceBand } from '../charts/chance-band';
import { ChartSeries, type SeriesId } from '../charts/series';

/** The shared views' smoothing of the training loss (the page's default). */
export const RESULT_SMOOTHING = 0.6;

export interface ResultLine {
  id: string;
  name: string;
  series: SeriesId;
  color: string;
  faint?: boolean;
  dots?: boolean;
}

export const LOSS_LINES: readonly ResultLine[] = [
  { id: 'train-raw', name: 'train (raw)', series: 'lossRaw', color: '#3b82f6', faint: true },
  { id: 'train', name: 'train', series: 'lossSmooth', color: '#3b82f6' },
  { id: 'val', name: 'validation', series: 'val', color: '#f97316', dots: true },
];

export const ACCURACY_LINES: readonly ResultLine[] = [
  { id: 'accuracy', name: 'accuracy', series: 'accuracy', color: '#f97316', dots: true },
];

/** The result's series, and its accuracy band (null for text data). */
export function resultSeries(r: { config: RunConfig; metrics: readonly StepMetrics[]; evals: readonly EvalMetrics[] }): {
  series: ChartSeries;
  band: { y0: number; y1: number; label: string } | null;
} {
  const series = new ChartSeries(RESULT_SMOOTHING);
  series.sync(r.metrics, r.evals, RESULT_SMOOTHING);
  const band = taskChanceBand(r.config);
  return { series, band: band ? { y0: band.low, y1: band.high, label: bandLabel(band) } : null };
}
