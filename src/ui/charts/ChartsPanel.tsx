// The run's charts: training and validation loss beside a task run's answer accuracy (0–100 %, with
// chance and the evaluation's sampling band around it; a passkey's digits, and its latest whole keys
// by needle depth under it), then tokens/s, learning rate, gradient norm
// and, for NSA models, the gate mean of each branch and the key rows each query read, as the forward
// kernels counted them, against dense attention's (folded on a phone); one smoothing weight
// (TensorBoard-style, the raw values faint behind) and one log-scale switch for all of them.
import { useEffect, useId, useMemo, useState } from 'react';
import { useShallow } from 'zustand/react/shallow';

import { snapshotSelectionOf } from '../../definitions/selection-snapshot';
import type { RunConfig } from '../../train/config';
import { taskAnswerLabel, taskChance } from '../../train/eval/task-chance';
import { isPhone } from '../components/FoldPanel';
import { runFileName } from '../heartbeat/file-name';
import { useLibrary } from '../library/library-state';
import { useStore } from '../store';
import { bandLabel, percent, taskChanceBand } from './chance-band';
import { type ChartSettings, DEFAULT_CHART_SETTINGS, parseChartSettings, writeChartSettings, type XAxisKind } from './chart-settings';
import { DepthStrip } from './DepthStrip';
import { type LineSpec, MetricChart } from './MetricChart';
import { LOSS_SHARE } from './pacing';
import { answerSeries, ChartSeries, MAX_ANSWER_LINES } from './series';
import { SmoothingControl } from './SmoothingControl';
import { ZoomControl } from './ZoomControl';

/** The exports' file name stem, read when a file is saved: run name, attention and step (e.g. tiny-nsa-12-34-56_nsa_step120). */
function currentFileBase(): string {
  const { runConfig, config, stepsDone, libraryId } = useStore.getState();
  const name = useLibrary.getState().entries.find((e) => e.id === libraryId)?.name ?? null;
  return runFileName(runConfig ?? config, name, stepsDone, 'x').replace(/_x$/, '');
}

export const COLORS = {
  train: '#3b82f6',
  val: '#f97316',
  rate: '#10b981',
  lr: '#a855f7',
  grad: '#ef4444',
  cmp: '#0ea5e9',
  sel: '#f59e0b',
  win: '#22c55e',
  keys: '#334155',
};
/** A passkey's digits, one colour each (dashed, beside the accuracy's solid line). */
const DIGIT_COLORS = ['#0ea5e9', '#a855f7', '#22c55e', '#ef4444', '#64748b', '#14b8a6', '#eab308', '#ec4899'];

/** Lines per answer on the accuracy chart: a passkey's digits (at most MAX_ANSWER_LINES), else none. */
function digitLines(c: RunConfig): number {
  return c.data.source === 'passkey' && c.data.passkey ? Math.min(c.data.passkey.keyLength, MAX_ANSWER_LINES) : 0;
}

const twoDecimals = (v: number) => v.toFixed(2);
const oneDecimal = (v: number) => v.toFixed(1);
/** Accuracy is drawn on its whole range, so a wobble near chance looks like one. */
const ACCURACY_RANGE = [0, 1] as const;

export function ChartsPanel() {
  const metrics = useStore((s) => s.metrics);
  const evals = useStore((s) => s.evals);
  const [settings, setSettings] = useState<ChartSettings>(() =>
    typeof location === 'undefined' ? DEFAULT_CHART_SETTINGS : parseChartSettings(location.search),
  );
  useEffect(() => writeChartSettings(settings), [settings]);
  const { smoothing, log, x, zoom } = settings;
  const set = (patch: Partial<ChartSettings>) => setSettings((c) => ({ ...c, ...patch }));
  const ids = { log: useId(), x: useId() };
  // A new x axis rebuilds the series from the metrics (their x values change). They are a cache of
  // (metrics, evals, smoothing, x): sync() below fills new ones with the weight of the moment, so
  // they are made with any weight (the default).
  const s = useMemo(() => new ChartSeries(DEFAULT_CHART_SETTINGS.smoothing, undefined, x), [x]);
  const xName = x === 'step' ? 'step' : 'seconds';
  // Appends only the new steps (sync is idempotent, so a repeated render does no harm); each
  // chart then redraws at its own pace (see MetricChart).
  const revision = useMemo(() => {
    s.sync(metrics, evals, smoothing);
    return s.revision;
  }, [s, metrics, evals, smoothing]);
  const common = { revision, log, xName, xRange: zoom, fileBase: currentFileBase };
  // Line lists change identity only with the smoothing weight: the loss chart redraws at once.
  const lines = useMemo(
    () =>
      ({
        loss: [
          { id: 'train-raw', name: 'train (raw)', series: s.get('lossRaw'), color: COLORS.train, faint: true },
          { id: 'train', name: 'train', series: s.get('lossSmooth'), color: COLORS.train },
          { id: 'val', name: 'validation', series: s.get('val'), color: COLORS.val, dots: true },
        ],
        tokens: [
          { id: 'tokens-raw', name: 'tokens/s (raw)', series: s.get('tokensPerSecond'), color: COLORS.rate, faint: true },
          { id: 'tokens', name: 'tokens/s', series: s.get('tokensSmooth'), color: COLORS.rate },
        ],
        lr: [{ id: 'lr', name: 'lr', series: s.get('lr'), color: COLORS.lr }],
        accuracy: [{ id: 'accuracy', name: 'accuracy', series: s.get('accuracy'), color: COLORS.val, dots: true }],
        grad: [
          { id: 'grad-raw', name: 'grad norm (raw)', series: s.get('gradNorm'), color: COLORS.grad, faint: true },
          { id: 'grad', name: 'grad norm', series: s.get('gradSmooth'), color: COLORS.grad },
        ],
        gates: [
          { id: 'gate-cmp', name: 'compressed', series: s.get('gateCmpSmooth'), color: COLORS.cmp },
          { id: 'gate-sel', name: 'selected', series: s.get('gateSelSmooth'), color: COLORS.sel },
          { id: 'gate-win', name: 'window', series: s.get('gateWinSmooth'), color: COLORS.win },
        ],
        keys: [
          { id: 'keys-total', name: 'all branches', series: s.get('keysTotal'), color: COLORS.keys },
          { id: 'keys-cmp', name: 'compressed', series: s.get('keysCmp'), color: COLORS.cmp },
          { id: 'keys-sel', name: 'selected', series: s.get('keysSel'), color: COLORS.sel },
          { id: 'keys-win', name: 'window', series: s.get('keysWin'), color: COLORS.win },
        ],
      }) satisfies Record<string, LineSpec[]>,
    [s],
  );
  // New arrays when the smoothing weight changes: the smoothed charts redraw at once (`weight`: the
  // smoothing they show).
  const shownLines = useMemo(
    () => ({ weight: smoothing, loss: [...lines.loss], tokens: [...lines.tokens], grad: [...lines.grad], gates: [...lines.gates] }),
    [lines, smoothing],
  );
  // Gates: for NSA runs (mounted before the run, like every chart), or whatever run reported them.
  const nsa = useStore((st) => (st.runConfig ?? st.config).model.attention === 'nsa');
  const hasGates = nsa || s.get('gateCmp').length > 0;
  const hasKeys = nsa || s.get('keysTotal').length > 0;
  // Dense attention's mean over the positions, (T + 1)/2 keys per query: the line the counts sit under.
  const seqLen = useStore((st) => (st.runConfig ?? st.validConfig).model.seqLen);
  const denseKeys = useMemo(() => ({ y: (seqLen + 1) / 2, label: `dense ${oneDecimal((seqLen + 1) / 2)}` }), [seqLen]);
  // From the held run's config, else the last valid one (a draft value such as 'abc' never reaches a chart).
  const chance = useStore((st) => taskChance(st.runConfig ?? st.validConfig));
  const answers = useStore((st) => taskAnswerLabel(st.runConfig ?? st.validConfig));
  // A passkey's accuracy per digit beside the whole: which digit a model has not learned yet.
  const digits = useStore((st) => digitLines(st.runConfig ?? st.validConfig));
  // NSA, MoBA and DSA (a model with a selection): the share of answers whose source a layer's selection read.
  const routed = useStore((st) => snapshotSelectionOf((st.runConfig ?? st.validConfig).model) !== null);
  const accuracyLines = useMemo(
    () => [
      ...lines.accuracy,
      ...(routed
        ? [
            {
              id: 'needle',
              name: 'needle selected',
              series: s.get('needle'),
              color: COLORS.sel,
              dash: '2 3',
              dots: true,
            } satisfies LineSpec,
          ]
        : []),
      ...Array.from({ length: digits }, (_, j): LineSpec => ({
        id: `digit-${j + 1}`,
        name: `digit ${j + 1}`,
        series: s.get(answerSeries(j)),
        color: DIGIT_COLORS[j],
        dash: '4 3',
      })),
    ],
    [lines, digits, s, routed],
  );
  const chanceBand = useStore(useShallow((st) => taskChanceBand(st.runConfig ?? st.validConfig)));
  const band = useMemo(() => (chanceBand ? { y0: chanceBand.low, y1: chanceBand.high, label: bandLabel(chanceBand) } : null), [chanceBand]);
  // The secondary charts start folded on a phone (the page stays a few screens long), open elsewhere.
  const [moreOpen, setMoreOpen] = useState(() => !isPhone());
  const [mainHeight] = useState(() => (isPhone() ? 180 : 260));
  return (
    <section className="panel charts-panel" aria-labelledby="charts-heading" data-testid="charts-panel">
      <div className="charts-head">
        <h2 id="charts-heading">Charts</h2>
        <div className="controls">
          <SmoothingControl
            value={smoothing}
            onChange={(v) => set({ smoothing: v })}
            testId="smoothing-slider"
            valueTestId="smoothing-value"
          />
          <input id={ids.log} data-testid="log-scale" type="checkbox" checked={log} onChange={(e) => set({ log: e.target.checked })} />
          <label htmlFor={ids.log}>Log scale (every chart)</label>
          <label htmlFor={ids.x}>x axis</label>
          <select id={ids.x} data-testid="chart-x-axis" value={x} onChange={(e) => set({ x: e.target.value as XAxisKind, zoom: null })}>
            <option value="step">step</option>
            <option value="time">wall-clock seconds</option>
          </select>
          <ZoomControl zoom={zoom} unit={xName} onChange={(z) => set({ zoom: z })} />
        </div>
      </div>
      <div className={chance !== null ? 'chart-main chart-main-task' : 'chart-main'}>
        <MetricChart
          testId="loss-chart"
          title="Loss (nats/token)"
          {...common}
          height={mainHeight}
          format={twoDecimals}
          lines={shownLines.loss}
          share={LOSS_SHARE}
        />
        {chance !== null && (
          <div className="chart-task">
            <MetricChart
              {...common}
              testId="accuracy-chart"
              title={`Answer accuracy (${answers ?? 'answers'}, validation)`}
              height={mainHeight}
              format={percent}
              lines={accuracyLines}
              yRange={ACCURACY_RANGE}
              reference={{ y: chance, label: `chance ${percent(chance)}` }}
              band={band}
            />
            <DepthStrip />
          </div>
        )}
      </div>
      <details className="chart-more" open={moreOpen} onToggle={(e) => setMoreOpen(e.currentTarget.open)} data-testid="charts-more">
        <summary>
          Tokens/s, learning rate, gradient norm{hasGates ? ', gates' : ''}
          {hasKeys ? ', keys read' : ''}
        </summary>
        <div className="chart-grid">
          <MetricChart {...common} testId="tokens-chart" title="Tokens per second" lines={shownLines.tokens} />
          <MetricChart {...common} testId="lr-chart" title="Learning rate" lines={lines.lr} />
          <MetricChart {...common} testId="gradnorm-chart" title="Gradient norm (before clipping)" lines={shownLines.grad} />
          {hasGates && (
            <MetricChart {...common} testId="gates-chart" title="Gate mean per branch" format={twoDecimals} lines={shownLines.gates} />
          )}
          {hasKeys && (
            <MetricChart
              {...common}
              testId="keys-chart"
              title="Keys read per query and group (counted by the kernels)"
              format={oneDecimal}
              lines={lines.keys}
              reference={denseKeys}
            />
          )}
        </div>
      </details>
    </section>
  );
}
