// The watchdog, evaluated once a second while a train() call is active.
import { useStore } from '../store';
import { useTick } from './use-tick';
import { checkStall, type Stall } from './watchdog';

export function useStall(): Stall | null {
  const active = useStore((s) => s.status === 'running' || s.status === 'pausing');
  const heartbeat = useStore((s) => s.heartbeat);
  const since = useStore((s) => s.runningSinceWall);
  const timeoutSeconds = useStore((s) => s.watchdogSeconds);
  useTick(active ? 1000 : null);
  return checkStall({ now: Date.now(), active, heartbeat, since, timeoutSeconds });
}
