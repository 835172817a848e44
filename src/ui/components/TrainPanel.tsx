// Train the `tiny` preset for N steps in the worker; pause, resume, stop.
import { useId } from 'react';
import { pauseTraining, resumeTraining, startTraining, stopTraining } from '../controller';
import { MAX_STEPS, parseSteps, useStore } from '../store';
import { LossChart } from './LossChart';
import { RunStats } from './RunStats';

const ACTIVE = new Set(['starting', 'training', 'pausing', 'stopping']);

export function TrainPanel() {
  const { stepsText, setStepsText, status, error, stepsDone, target } = useStore();
  const stepsId = useId();
  const hintId = useId();
  const steps = parseSteps(stepsText);
  const active = ACTIVE.has(status);
  return (
    <section className="panel" aria-labelledby="train-heading">
      <h2 id="train-heading">Train</h2>
      <p className="muted">
        The <code>tiny</code> preset (2 layers, dense attention, byte tokens) on the Brown corpus, in a web worker.
      </p>
      <form
        className="controls"
        onSubmit={(e) => {
          e.preventDefault();
          void startTraining();
        }}
      >
        <label htmlFor={stepsId}>Steps</label>
        <input
          id={stepsId}
          data-testid="steps-input"
          type="number"
          inputMode="numeric"
          min={1}
          max={MAX_STEPS}
          step={1}
          value={stepsText}
          disabled={active}
          aria-invalid={steps === null}
          aria-describedby={hintId}
          onChange={(e) => setStepsText(e.target.value)}
        />
        <button type="submit" data-testid="train-button" disabled={active || steps === null}>
          Train
        </button>
        {status === 'paused' && stepsDone < target ? (
          <button type="button" data-testid="resume-button" onClick={() => void resumeTraining()}>
            Resume
          </button>
        ) : (
          <button type="button" data-testid="pause-button" disabled={status !== 'training'} onClick={() => void pauseTraining()}>
            Pause
          </button>
        )}
        <button
          type="button"
          data-testid="stop-button"
          disabled={!(status === 'training' || status === 'paused')}
          onClick={() => void stopTraining()}
        >
          Stop
        </button>
        <span id={hintId} className={steps === null ? 'error-text' : 'muted'}>
          {steps === null ? `Enter a whole number from 1 to ${MAX_STEPS}.` : 'Optimizer steps for a new run.'}
        </span>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="run-error">
          {error}
        </p>
      )}
      <RunStats />
      <LossChart />
    </section>
  );
}
