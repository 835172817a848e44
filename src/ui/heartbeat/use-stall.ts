// The watchdog, evaluated once a second on the page's main thread while a train() call is active,
// with its timeout adapted to the run's measured (or estimated) step time.
import { useMemo } from 'react';

import { useStore } from '../store';
import { useTick } from './use-tick';
import { adaptiveTimeoutSeconds, checkStall, estimateStepMs, type Stall, type StepTiming } from './watchdog';

/** What the watchdog's timeout adapts to, from the run's metrics, facts and config. */
export function useStepTiming(): StepTiming {
  const metrics = useStore((s) => s.metrics);
  const info = useStore((s) => s.runInfo);
  const train = useStore((s) => s.runConfig?.train);
  const adapter = useStore((s) => s.adapter);
  const slowestStepMs = useMemo(() => (metrics.length ? metrics.reduce((m, x) => Math.max(m, x.stepMs), 0) : null), [metrics]);
  const software = adapter.status === 'ready' ? adapter.summary.software : true;
  const estimatedStepMs = info ? estimateStepMs(info.paramCount, info.tokensPerStep, software) : null;
  const evalStepRatio = train ? train.evalBatches / Math.max(1, train.gradAccum) : 1;
  return { slowestStepMs, estimatedStepMs, evalStepRatio };
}

export function useStall(): Stall | null {
  const active = useStore((s) => s.status === 'running' || s.status === 'pausing');
  const heartbeat = useStore((s) => s.heartbeat);
  const since = useStore((s) => s.runningSinceWall);
  const timeoutSeconds = useStore((s) => s.watchdogSeconds);
  const timing = useStepTiming();
  useTick(active ? 1000 : null);
  // The watchdog judges the moment of each render (useTick renders every second while a train()
  // call is active, a heartbeat or status change at once), so the render reads the time on purpose.
  // eslint-disable-next-line react-hooks/purity -- see above
  return checkStall({ now: Date.now(), active, heartbeat, since, timeoutSeconds, timing });
}

/** The timeout the watchdog applies now (seconds), for the Heartbeat panel. */
export function useEffectiveTimeout(): number {
  const floor = useStore((s) => s.watchdogSeconds);
  const phase = useStore((s) => s.heartbeat?.phase ?? 'starting');
  return adaptiveTimeoutSeconds(floor, phase, useStepTiming());
}
