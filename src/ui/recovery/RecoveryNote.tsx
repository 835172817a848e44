// What the page did after a lost device, a hung GPU, a crashed or stalled worker: restarting the
// worker, then where the run went on from (its last autosave), or why it could not.
import { useStore } from '../store';
import { recoveryText } from './recovery-policy';

export function RecoveryNoteLine() {
  const note = useStore((s) => s.recovery);
  if (!note) return null;
  return (
    <p
      className={note.state === 'failed' ? 'error' : 'note'}
      role={note.state === 'failed' ? 'alert' : 'status'}
      data-testid="recovery-note"
      data-state={note.state}
      data-cause={note.cause}
      data-lost-at={note.lostAtStep}
      data-resumed-at={note.resumedAtStep ?? ''}
      title={note.detail}
    >
      {recoveryText(note)}
    </p>
  );
}
