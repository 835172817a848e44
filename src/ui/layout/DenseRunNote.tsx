// What the selection stepper shows for a dense run: there is nothing to select, so it says why
// and offers the same config with NSA as a new run, compared with this one.
import { useState } from 'react';

import { startCounterpartOf } from '../library/counterpart-run';
import { useStore } from '../store';

export function DenseRunNote() {
  const runConfig = useStore((s) => s.runConfig);
  const libraryId = useStore((s) => s.libraryId);
  const [problem, setProblem] = useState<string | null>(null);
  if (!runConfig) return null;
  const T = runConfig.model.seqLen;
  const start = async () => {
    setProblem(null);
    setProblem(await startCounterpartOf(runConfig, libraryId ?? '', 'this run'));
  };
  return (
    <div data-testid="stepper-dense">
      <p className="muted">
        This run uses <strong>dense attention</strong>: every query reads all earlier keys (query t reads t + 1 of them, up to {T}), so
        there are no selected blocks to step through. NSA reads compressed blocks, the top-n selected blocks and a sliding window instead.
      </p>
      <button type="button" onClick={() => void start()} data-testid="stepper-start-nsa">
        Train the same config with NSA
      </button>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
