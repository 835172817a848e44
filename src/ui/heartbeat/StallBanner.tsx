// Shown when the watchdog finds no heartbeat for longer than its timeout: names the phase the
// worker was in and what to do, and offers to restart it (terminate it, drop its device, get a
// fresh one) and continue the run from its last autosave. It sits in the page's flow above the
// panels, never over the run controls.
import { useState } from 'react';

import { restartWorker } from '../controller';
import { useStore } from '../store';
import { useStall } from './use-stall';
import { PHASE_TEXT, stallAdvice } from './watchdog';

export function StallBanner() {
  const stall = useStall();
  const autosavedStep = useStore((s) => s.autosavedStep);
  const [restarting, setRestarting] = useState(false);
  if (!stall) return null;
  return (
    <div className="stall-banner" role="alert" data-testid="stall-banner" data-phase={stall.phase}>
      <p>
        <strong>The trainer has stopped responding.</strong> No heartbeat for {Math.floor(stall.ageSeconds)} s (the watchdog allows{' '}
        {Math.round(stall.timeoutSeconds)} s); it was in phase <code data-testid="stall-phase">{stall.phase}</code> (
        {PHASE_TEXT[stall.phase] ?? stall.phase}) at step {stall.step}.
      </p>
      <p data-testid="stall-advice">{stallAdvice(stall)}</p>
      <button
        type="button"
        data-testid="restart-worker"
        disabled={restarting}
        onClick={() => {
          setRestarting(true);
          const detail = `No heartbeat for ${Math.floor(stall.ageSeconds)} s in phase ${stall.phase} at step ${stall.step}.`;
          void restartWorker('stalled', detail).finally(() => setRestarting(false));
        }}
      >
        {autosavedStep > 0 ? `Restart the worker and continue from step ${autosavedStep}` : 'Restart the worker and start this run again'}
      </button>
    </div>
  );
}
