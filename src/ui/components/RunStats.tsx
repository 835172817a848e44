// The latest numbers of the run, as text.
import { formatBytes, formatLoss, formatRate } from '../format';
import { useStore } from '../store';

export function RunStats() {
  const { metrics, target, stepsDone, status, heartbeat } = useStore();
  const first = metrics[0];
  const last = metrics.at(-1);
  return (
    <dl className="stats">
      <div>
        <dt>Status</dt>
        <dd data-testid="run-status" aria-live="polite">
          {status}
        </dd>
      </div>
      <div>
        <dt>Step</dt>
        <dd>
          <span data-testid="steps-done">{stepsDone}</span> / <span data-testid="steps-target">{target}</span>
        </dd>
      </div>
      <div>
        <dt>Loss</dt>
        <dd>
          <span data-testid="loss-latest">{formatLoss(last?.loss)}</span>
          <span className="muted">
            {' '}
            (first <span data-testid="loss-first">{formatLoss(first?.loss)}</span>)
          </span>
        </dd>
      </div>
      <div>
        <dt>Tokens/s</dt>
        <dd data-testid="tokens-per-second">{formatRate(last?.tokensPerSecond)}</dd>
      </div>
      <div>
        <dt>GPU memory</dt>
        <dd data-testid="gpu-memory">{heartbeat ? formatBytes(heartbeat.gpu_mem_bytes) : '–'}</dd>
      </div>
    </dl>
  );
}
