// An opened result file: its run's name, config in one line per section, loss (and a task's
// accuracy against chance) over its steps, and its selection snapshots in the stepper — all from
// the file, in any browser (nothing of it is in this browser's run library).
import { useMemo } from 'react';

import { taskAnswerLabel, taskChance } from '../../train/eval/task-chance';
import { percent } from '../charts/chance-band';
import { type LineSpec, MetricChart } from '../charts/MetricChart';
import { SECTIONS } from '../config/fields';
import { sectionSummary } from '../config/section-summary';
import { formatLoss } from '../format';
import { SelectionStepper } from '../stepper';
import { ACCURACY_LINES, LOSS_LINES, type ResultLine, resultSeries } from './result-lines';
import { useShared } from './share';

const ACCURACY_RANGE = [0, 1] as const;
const twoDecimals = (v: number) => v.toFixed(2);

export function SharedResultPanel() {
  const result = useShared((s) => s.result);
  const set = useShared((s) => s.set);
  const view = useMemo(() => {
    if (!result) return null;
    const { series, band } = resultSeries(result);
    const c = result.config;
    const lines = (specs: readonly ResultLine[]): LineSpec[] => specs.map((l) => ({ ...l, series: series.get(l.series) }));
    const seqLen = c.model.seqLen;
    return {
      revision: series.revision,
      loss: lines(LOSS_LINES),
      accuracy: lines(ACCURACY_LINES),
      chance: taskChance(c),
      answers: taskAnswerLabel(c),
      band,
      recall: c.data.source === 'recall' && c.data.recall ? { task: c.data.recall, seqLen } : undefined,
      passkey: c.data.source === 'passkey' && c.data.passkey ? { task: c.data.passkey, seqLen } : undefined,
    };
  }, [result]);
  if (!result || !view) return null;
  const last = result.metrics.at(-1);
  const lastEval = result.evals.at(-1);
  return (
    <section className="panel shared-panel" aria-labelledby="shared-heading" data-testid="shared-result" data-steps={result.metrics.length}>
      <div className="charts-head">
        <h2 id="shared-heading">Shared result: {result.name}</h2>
        <button type="button" data-testid="shared-close" onClick={() => set({ result: null })}>
          Close
        </button>
      </div>
      <p className="muted" data-testid="shared-facts">
        {result.metrics.length} steps · loss {formatLoss(last?.loss)} · validation loss {formatLoss(lastEval?.valLoss)}
        {lastEval?.accuracy !== undefined ? ` · accuracy ${percent(lastEval.accuracy)}` : ''}
        {result.createdAt ? ` · shared ${result.createdAt.slice(0, 16).replace('T', ' ')} UTC` : ''}
      </p>
      {(result.tags?.length || result.notes) && (
        <div className="run-notes" data-testid="shared-notes">
          {result.tags?.map((t) => (
            <span key={t} className="badge tag">
              {t}
            </span>
          ))}
          {result.notes && <p className="notes-text">{result.notes}</p>}
        </div>
      )}
      <ul className="shared-config">
        {SECTIONS.map((s) => (
          <li key={s.id}>
            <strong>{s.title}</strong> <span className="muted">{sectionSummary(s.id, result.config)}</span>
          </li>
        ))}
      </ul>
      <div className={view.chance !== null ? 'chart-main chart-main-task' : 'chart-main'}>
        <MetricChart testId="shared-loss" title="Loss (nats/token)" revision={view.revision} lines={view.loss} format={twoDecimals} />
        {view.chance !== null && (
          <MetricChart
            testId="shared-accuracy"
            title={`Answer accuracy (${view.answers ?? 'answers'}, validation)`}
            revision={view.revision}
            lines={view.accuracy}
            format={percent}
            yRange={ACCURACY_RANGE}
            reference={{ y: view.chance, label: `chance ${percent(view.chance)}` }}
            band={view.band}
          />
        )}
      </div>
      <SelectionStepper snapshots={result.snapshots} recall={view.recall} passkey={view.passkey} />
    </section>
  );
}
