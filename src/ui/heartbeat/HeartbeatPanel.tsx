// The worker's pulse: age of the last heartbeat (updated every second), step, phase, tokens/s and
// GPU memory, and the watchdog's timeout.
import { useId, useState } from 'react';

import { FoldPanel } from '../components/FoldPanel';
import { formatBytes, formatRate } from '../format';
import { useStore } from '../store';
import { Downloads } from './Downloads';
import { useEffectiveTimeout } from './use-stall';
import { useTick } from './use-tick';
import { heartbeatAge, MAX_WATCHDOG_SECONDS, MIN_WATCHDOG_SECONDS, parseWatchdogSeconds } from './watchdog';

export function HeartbeatPanel() {
  const heartbeat = useStore((s) => s.heartbeat);
  const seconds = useStore((s) => s.watchdogSeconds);
  const setSeconds = useStore((s) => s.setWatchdogSeconds);
  const [text, setText] = useState(String(seconds));
  const id = useId();
  const hintId = useId();
  useTick(heartbeat ? 1000 : null);
  // A clock: the age is of this render's moment (useTick renders again every second, a new
  // heartbeat at once), so the render reads the time on purpose.
  // eslint-disable-next-line react-hooks/purity -- see above
  const age = heartbeatAge(heartbeat, Date.now());
  const valid = parseWatchdogSeconds(text) !== null;
  const effective = useEffectiveTimeout();
  return (
    <FoldPanel
      title="Heartbeat"
      summary={age === null ? 'no beat yet' : `last beat ${Math.floor(age)} s ago`}
      className="heartbeat-panel"
      testId="heartbeat-panel"
    >
      <dl className="stats">
        <div>
          <dt>Last beat</dt>
          <dd data-testid="heartbeat-age" data-age={age === null ? '' : age.toFixed(1)}>
            {age === null ? '–' : `${Math.floor(age)} s ago`}
          </dd>
        </div>
        <div>
          <dt>Step</dt>
          <dd data-testid="heartbeat-step">{heartbeat ? heartbeat.step : '–'}</dd>
        </div>
        <div>
          <dt>Phase</dt>
          <dd data-testid="heartbeat-phase">{heartbeat?.phase ?? '–'}</dd>
        </div>
        <div>
          <dt>Tokens/s</dt>
          <dd data-testid="tokens-per-second">{formatRate(heartbeat?.toks_per_s ?? undefined)}</dd>
        </div>
        <div>
          <dt>GPU memory</dt>
          <dd data-testid="gpu-memory">{heartbeat ? formatBytes(heartbeat.gpu_mem_bytes) : '–'}</dd>
        </div>
      </dl>
      {heartbeat && (
        <p className="muted heartbeat-msg" data-testid="heartbeat-msg">
          {heartbeat.msg}
        </p>
      )}
      <div className="controls">
        <label htmlFor={id}>Watchdog timeout (s)</label>
        <input
          id={id}
          data-testid="watchdog-seconds"
          type="number"
          min={MIN_WATCHDOG_SECONDS}
          max={MAX_WATCHDOG_SECONDS}
          step={1}
          value={text}
          aria-invalid={!valid}
          aria-describedby={hintId}
          onChange={(e) => {
            setText(e.target.value);
            const v = parseWatchdogSeconds(e.target.value);
            if (v !== null) setSeconds(v);
          }}
        />
        <span id={hintId} className={valid ? 'muted' : 'error-text'}>
          {valid
            ? 'At least this long without a heartbeat while training shows a stall warning; slower steps wait longer.'
            : `Enter ${MIN_WATCHDOG_SECONDS} to ${MAX_WATCHDOG_SECONDS} seconds.`}
        </span>
        <span className="muted" data-testid="watchdog-effective" data-seconds={Math.round(effective)}>
          Now: {Math.round(effective)} s{effective > seconds ? ' (3 × the slowest step so far, or its estimate)' : ''}
        </span>
      </div>
      <Downloads />
    </FoldPanel>
  );
}
