// Where the run is: status, step count, elapsed training time, ETA, the whole run's time, latest losses.
import { formatLoss } from '../format';
import { useTick } from '../heartbeat/use-tick';
import { elapsedMs, useStore } from '../store';
import { useCalibration } from './calibration';
import { etaMs, formatDuration } from './timing';

const STATUS_TEXT: Record<string, string> = {
  idle: 'no run',
  starting: 'building the model (compiling GPU pipelines)…',
  running: 'training',
  pausing: 'pausing after this step…',
  paused: 'paused',
  done: 'done',
  error: 'failed',
};

export function RunStats() {
  const s = useStore();
  const running = s.status === 'running';
  useTick(running ? 1000 : null); // re-render each second while the clock runs
  const target = s.runConfig?.train.steps ?? s.config.train.steps;
  const last = s.metrics.at(-1);
  const lastEval = s.evals.at(-1);
  useCalibration();
  // The whole run: elapsed plus the steps left at the recent rate (or, done, the elapsed time).
  const elapsed = elapsedMs(s);
  const left = s.stepsDone >= target ? 0 : etaMs(s.metrics, s.stepsDone, target);
  const total = s.metrics.length === 0 || left === null ? null : elapsed + left;
  return (
    <dl className="stats" data-testid="run-stats">
      <div>
        <dt>Status</dt>
        <dd data-testid="run-status" data-status={s.status}>
          {STATUS_TEXT[s.status]}
        </dd>
      </div>
      <div>
        <dt>Step</dt>
        <dd>
          <span data-testid="steps-done">{s.stepsDone}</span> /{' '}
          <span data-testid="steps-target">{Number.isFinite(target) ? target : '–'}</span>
        </dd>
      </div>
      <div>
        <dt>Elapsed</dt>
        <dd data-testid="elapsed">{formatDuration(elapsed)}</dd>
      </div>
      <div>
        <dt>ETA</dt>
        <dd data-testid="eta">{running ? formatDuration(etaMs(s.metrics, s.stepsDone, target)) : '–'}</dd>
      </div>
      <div>
        <dt>Total</dt>
        <dd data-testid="run-total" title="Elapsed plus the remaining steps at the recent rate">
          {formatDuration(total)}
        </dd>
      </div>
      <div>
        <dt>Loss</dt>
        <dd>
          <span data-testid="loss-latest" data-step={last?.step ?? ''}>
            {formatLoss(last?.loss)}
          </span>
          <span className="muted">
            {' '}
            (first <span data-testid="loss-first">{formatLoss(s.metrics[0]?.loss)}</span>)
          </span>
        </dd>
      </div>
      <div>
        <dt>Val loss</dt>
        <dd data-testid="val-loss-latest">{formatLoss(lastEval?.valLoss)}</dd>
      </div>
    </dl>
  );
}
