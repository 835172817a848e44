// The run bar at the top of the page: controls, where the run is, and why it failed or cannot start.
import { StallBanner } from '../heartbeat/StallBanner';
import { RecoveryNoteLine } from '../recovery/RecoveryNote';
import { ShareButtons } from '../share/ShareButtons';
import { useStore } from '../store';
import { AutosaveStatusLine } from './Autosave';
import { RunControls } from './RunControls';
import { RunStats } from './RunStats';

interface Props {
  problems: readonly string[];
}

export function RunPanel({ problems }: Props) {
  const status = useStore((s) => s.status);
  const error = useStore((s) => s.error);
  const info = useStore((s) => s.runInfo);
  return (
    <section className="panel run-panel" id="run-panel" tabIndex={-1} aria-labelledby="run-heading" data-testid="run-panel">
      <div className="run-bar">
        <h2 id="run-heading">Run</h2>
        <RunControls problems={problems} />
        <ShareButtons />
      </div>
      <StallBanner />
      <AutosaveStatusLine />
      <RecoveryNoteLine />
      {status === 'idle' && problems.length > 0 && (
        <p className="error-text" data-testid="start-blocked" role="status">
          Fix the configuration to start: {problems[0]}
          {problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}
        </p>
      )}
      {status !== 'idle' && status !== 'starting' && (
        <p className="muted run-note">The configuration is locked while a run exists; Reset to edit it.</p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="run-error">
          {error}
        </p>
      )}
      <RunStats />
      {info && (
        <p className="muted run-facts" data-testid="run-facts">
          {info.paramCount.toLocaleString('en-US')} parameters · {info.tokensPerStep.toLocaleString('en-US')} tokens/step · data{' '}
          {info.dataset.name}
          {info.dataset.trainTokens !== null && ` (${info.dataset.trainTokens.toLocaleString('en-US')} training tokens)`} · unigram entropy{' '}
          {info.dataset.unigramEntropy.toFixed(3)} nats
        </p>
      )}
    </section>
  );
}
