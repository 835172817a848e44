// Shown when the watchdog finds no heartbeat for longer than its timeout: names the phase the
// worker was in and offers to restart it (terminate and recreate; the run is lost, the config kept).
import { useState } from 'react';

import { restartWorker } from '../controller';
import { useStall } from './use-stall';

const PHASE_TEXT: Record<string, string> = {
  init: 'building the model',
  data: 'preparing a batch',
  step: 'a training step on the GPU',
  eval: 'evaluating the validation loss',
  idle: 'idle between steps',
  starting: 'starting the first step',
};

export function StallBanner() {
  const stall = useStall();
  const [restarting, setRestarting] = useState(false);
  if (!stall) return null;
  return (
    <div className="stall-banner" role="alert" data-testid="stall-banner" data-phase={stall.phase}>
      <p>
        <strong>The trainer has stopped responding.</strong> No heartbeat for {Math.floor(stall.ageSeconds)} s; it was in phase{' '}
        <code data-testid="stall-phase">{stall.phase}</code> ({PHASE_TEXT[stall.phase] ?? stall.phase}) at step {stall.step}.
      </p>
      <p>
        The GPU may be hung or very slow. Restarting terminates the worker and starts a fresh one: this run is lost, the configuration is
        kept.
      </p>
      <button
        type="button"
        data-testid="restart-worker"
        disabled={restarting}
        onClick={() => {
          setRestarting(true);
          void restartWorker().finally(() => setRestarting(false));
        }}
      >
        Restart the worker
      </button>
    </div>
  );
}
