// A chart's export buttons: SVG, PNG and CSV of what it shows, named after the run and the chart.
import { type RefObject, useState } from 'react';

import { downloadText } from '../heartbeat/download';
import type { Point } from './decimate';
import { chartCsv, svgMarkup, svgToPng } from './export-chart';

interface Props {
  testId: string;
  title: string;
  fileBase: () => string;
  xName: string;
  drawn: ReadonlyArray<{ name: string; points: readonly Point[] }>;
  figure: RefObject<HTMLElement | null>;
}

export function ChartExport({ testId, title, fileBase, xName, drawn, figure }: Props) {
  const [error, setError] = useState<string | null>(null);
  const name = (ext: string) => `${fileBase()}_${testId.replace(/-chart$/, '')}.${ext}`;
  const svg = (): [string, number, number] => {
    const el = figure.current?.querySelector<SVGSVGElement>('svg.recharts-surface');
    if (!el) throw new Error(`${title}: nothing drawn yet`);
    const bg =
      getComputedStyle(figure.current as HTMLElement)
        .getPropertyValue('--panel')
        .trim() || '#ffffff';
    const { width, height } = el.getBoundingClientRect();
    return [svgMarkup(el, bg), width, height];
  };
  const run = async (f: () => Promise<void> | void) => {
    try {
      setError(null);
      await f();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <span className="chart-export" role="group" aria-label={`Export ${title}`}>
      <button
        type="button"
        data-testid={`${testId}-svg`}
        onClick={() => void run(() => downloadText(name('svg'), svg()[0], 'image/svg+xml'))}
      >
        SVG
      </button>
      <button
        type="button"
        data-testid={`${testId}-png`}
        onClick={() =>
          void run(async () => {
            const [markup, w, h] = svg();
            downloadText(name('png'), await svgToPng(markup, w, h), 'image/png');
          })
        }
      >
        PNG
      </button>
      <button
        type="button"
        data-testid={`${testId}-csv`}
        onClick={() => void run(() => downloadText(name('csv'), chartCsv(xName, drawn), 'text/csv'))}
      >
        CSV
      </button>
      {error && (
        <span className="error-text" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
