// "Sparse attention on this GPU": the benchmark of npm run bench:attention run in the page's worker
// on the user's adapter — training attention fwd+bwd time per token and decode time per token for
// NSA and dense as the context grows, the window, MoBA and DSA beside them at NSA's budget (ticked
// by default on a GPU), keys read per query, the crossover marked — with the lines
// downloadable in the schema the CLI prints. Sizes the adapter cannot hold are refused by the
// worker before it allocates anything.
import './bench.css';

import { useId, useState } from 'react';

import { CFG, M } from '../../bench/bench-sizes';
import { OTHER_MECHANISMS, type OtherMechanism } from '../../bench/mechanism-bench';
import { MAX_SEQ_LEN } from '../../definitions/model-config';
import type { BenchRequest } from '../../worker/protocol';
import { FoldPanel } from '../components/FoldPanel';
import { keysCrossover } from '../config/derived';
import { downloadText } from '../heartbeat/download';
import { useStore } from '../store';
import { benchJsonl, type BenchLine, benchSeries, parseContextLengths } from './bench-lines';
import { BenchChart } from './BenchChart';

export interface BenchPanelProps {
  /** Runs the benchmark, sending each JSON line as it is printed; rejects with a readable message. */
  onRun(req: BenchRequest, onLine: (line: BenchLine) => void): Promise<void>;
  /** Asks the running benchmark to stop before its next measurement. */
  onCancel(): void;
  /** Why the benchmark cannot run now (e.g. a run is training), or null. */
  busyReason: string | null;
}

/** Where the benchmark's NSA settings start to read fewer keys than dense. */
const CROSSOVER = keysCrossover(CFG);

const MECHANISM_LABEL: Record<OtherMechanism, string> = { window: 'window', moba: 'MoBA', dsa: 'DSA' };

const MIN_T = 64;
const MAX_T = MAX_SEQ_LEN; // the longest context a model config allows
const DEFAULT_GPU = '1k, 2k, 4k, 8k, 16k, 32k';
const DEFAULT_SOFTWARE = '256, 512, 1k';

export function BenchPanel({ onRun, onCancel, busyReason }: BenchPanelProps) {
  const software = useStore((s) => s.adapter.status === 'ready' && s.adapter.summary.software);
  const [text, setText] = useState(software ? DEFAULT_SOFTWARE : DEFAULT_GPU);
  const [train, setTrain] = useState(true);
  const [decode, setDecode] = useState(true);
  // The other mechanisms at NSA's budget: on by default on a GPU (seconds), off on a software adapter (minutes each).
  const [others, setOthers] = useState<OtherMechanism[]>(software ? [] : [...OTHER_MECHANISMS]);
  const [lines, setLines] = useState<BenchLine[]>([]);
  const [status, setStatus] = useState<'idle' | 'running' | 'done' | 'error'>('idle');
  const [error, setError] = useState<string | null>(null);
  const ids = { Ts: useId() };
  const parsed = parseContextLengths(text, MIN_T, MAX_T);
  const fieldError = 'error' in parsed ? parsed.error : !train && !decode ? 'Pick training, decoding or both.' : null;
  const running = status === 'running';
  const s = benchSeries(lines);
  const adapter = lines.find((l) => l.kind === 'adapter');

  const run = () => {
    if (fieldError || 'error' in parsed || running || busyReason) return;
    setLines([]);
    setError(null);
    setStatus('running');
    onRun({ Ts: parsed.Ts, train, decode, mechanisms: others }, (l) => setLines((prev) => [...prev, l])).then(
      () => setStatus('done'),
      (e: unknown) => {
        setError(e instanceof Error ? e.message : String(e));
        setStatus('error');
      },
    );
  };

  return (
    <FoldPanel title="Sparse attention on this GPU" className="bench-panel" testId="bench-panel" data={{ 'data-status': status }}>
      <p className="muted">
        Where sparse attention pays: the m7c-125m attention shape (12 heads, 2 groups, d<sub>k</sub> = 64; l = 32, d = 16, l′ = 64, n = 16,
        w = 512) timed on your adapter as the context grows, and beside them the sliding window, MoBA and DSA set to read no more keys per
        query than NSA — the same measurement as <code>npm run bench:attention -- --decode --train</code>.
      </p>
      <p className="muted" data-testid="bench-keys-crossover">
        With these settings a query reads a fixed n·l′ + w = {CROSSOVER.budget.toLocaleString('en-US')} selected and window keys plus one
        compressed key per d = {CFG.d} tokens, where dense reads t + 1: NSA reads fewer keys than dense only from T ={' '}
        {(CROSSOVER.last ?? 0).toLocaleString('en-US')} (the last query; {(CROSSOVER.mean ?? 0).toLocaleString('en-US')} on average over a
        sequence), so at T ≤ 1k it reads more, and its time saving starts later still.
      </p>
      <form
        className="bench-form"
        onSubmit={(e) => {
          e.preventDefault();
          run();
        }}
      >
        <label htmlFor={ids.Ts}>Context lengths</label>
        <input
          id={ids.Ts}
          data-testid="bench-T"
          value={text}
          disabled={running}
          aria-invalid={fieldError !== null}
          onChange={(e) => setText(e.target.value)}
        />
        <label>
          <input
            type="checkbox"
            data-testid="bench-train"
            checked={train}
            disabled={running}
            onChange={(e) => setTrain(e.target.checked)}
          />{' '}
          training fwd+bwd
        </label>
        <label>
          <input
            type="checkbox"
            data-testid="bench-decode"
            checked={decode}
            disabled={running}
            onChange={(e) => setDecode(e.target.checked)}
          />{' '}
          decode
        </label>
        <fieldset className="bench-mechanisms" disabled={running}>
          <legend title="Each is set to read at most as many keys per query as NSA at the last position (capped at T − 1): window w, MoBA top-k blocks of 64, DSA top-k tokens. Decoding covers all three.">
            beside NSA and dense, at NSA&apos;s budget:
          </legend>
          {OTHER_MECHANISMS.map((m) => (
            <label key={m}>
              <input
                type="checkbox"
                data-testid={`bench-mechanism-${m}`}
                checked={others.includes(m)}
                onChange={(e) =>
                  setOthers((prev) =>
                    e.target.checked ? OTHER_MECHANISMS.filter((x) => x === m || prev.includes(x)) : prev.filter((x) => x !== m),
                  )
                }
              />{' '}
              {MECHANISM_LABEL[m]}
            </label>
          ))}
        </fieldset>
        <button type="submit" data-testid="bench-run" disabled={running || fieldError !== null || busyReason !== null}>
          {running ? 'Measuring…' : 'Run benchmark'}
        </button>
        <button type="button" data-testid="bench-stop" disabled={!running} onClick={() => onCancel()}>
          Stop
        </button>
        <button
          type="button"
          data-testid="bench-download"
          disabled={lines.length === 0 || running}
          onClick={() =>
            downloadText(`nsa-bench_${new Date().toISOString().slice(0, 10)}.jsonl`, benchJsonl(lines), 'application/x-ndjson')
          }
        >
          Download JSON lines
        </button>
      </form>
      {fieldError && (
        <p className="error-text" data-testid="bench-field-error">
          {fieldError}
        </p>
      )}
      {busyReason && <p className="note">{busyReason}</p>}
      {error && (
        <p className="error" role="alert" data-testid="bench-error">
          {error}
        </p>
      )}
      {(running || lines.length > 0) && (
        <p className="muted" data-testid="bench-progress" aria-live="polite">
          {adapter ? `${String(adapter.adapter)} · ` : ''}
          {s.train.length + s.decode.length} measurement{s.train.length + s.decode.length === 1 ? '' : 's'}
          {running ? ' so far…' : ''}
        </p>
      )}
      <div className="bench-charts">
        <BenchChart testId="bench-train-chart" title="Training attention fwd+bwd, ms per token" unit="ms/token" points={s.train} />
        <BenchChart testId="bench-decode-chart" title="Decode attention, ms per token" unit="ms/token" points={s.decode} />
        <BenchChart
          testId="bench-keys-chart"
          title="Keys read per query (decode)"
          unit="keys"
          points={s.decodeKeys}
          markCrossover={false}
        />
        <BenchChart
          testId="bench-train-keys-chart"
          title="Keys read per query (training, mean over the sequence)"
          unit="keys"
          points={s.trainKeys}
          markCrossover={false}
        />
      </div>
    </FoldPanel>
  );
}
