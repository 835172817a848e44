// Generation: prompt and sampling settings, tokens streaming in one by one, and for a clicked
// token the key ranges its query selected in every layer and group (and, through onSelectToken,
// the decode snapshots for the selection stepper).
import './generate.css';

import { type ComponentProps, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';

import type { SelectionSnapshot } from '../../definitions/selection-snapshot';
import { FoldPanel } from '../components/FoldPanel';
import type { StepperFocus } from '../stepper';
import { DEFAULT_FORM, type GenerationField, type GenerationForm, MAX_TEMPERATURE, parseGenerationForm } from './form';
import { TokenDetails } from './TokenDetails';
import { generationSnapshots } from './trace';
import type { GeneratedPiece, GenerationDone, GenerationModel, GenerationRequest, GenerationSink, GenerationStart } from './types';

export interface TokenSelection {
  piece: GeneratedPiece;
  /** Decode snapshots of the generation so far, one per (layer, group); empty for dense models. */
  snapshots: SelectionSnapshot[];
  /** Points the stepper at the token's query in those snapshots. */
  focus: StepperFocus;
}

export interface GenerationPanelProps {
  /** Starts a generation; resolves when it ends (maxTokens, full context, or cancelled). */
  onGenerate(req: GenerationRequest, sink: GenerationSink): Promise<GenerationDone>;
  /** Asks the running generation to stop after its current token. */
  onCancel(): void;
  /** The model that would generate; null disables the panel (say why in disabledReason). */
  model: GenerationModel | null;
  disabledReason?: string;
  /** Initial field values. */
  defaults?: Partial<GenerationForm>;
  /** Shown under the prompt (e.g. "token ids separated by spaces" for synthetic data). */
  promptHint?: string;
  /** A generated token was selected (null: selection cleared by a new generation). */
  onSelectToken?(sel: TokenSelection | null): void;
}

type Status = 'idle' | 'running' | 'done' | 'error';

const STOP_TEXT: Record<GenerationDone['stop'], string> = {
  tokens: 'reached the token limit',
  context: 'the context is full',
  cancelled: 'stopped',
};

export function GenerationPanel({
  onGenerate,
  onCancel,
  model,
  disabledReason,
  defaults,
  promptHint,
  onSelectToken,
}: GenerationPanelProps) {
  const [form, setForm] = useState<GenerationForm>({ ...DEFAULT_FORM, ...defaults });
  const [status, setStatus] = useState<Status>('idle');
  const [start, setStart] = useState<GenerationStart | null>(null);
  const [pieces, setPieces] = useState<GeneratedPiece[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [stop, setStop] = useState<GenerationDone['stop'] | null>(null);
  const [stepAtStart, setStepAtStart] = useState(0);
  const runId = useRef(0);
  const running = status === 'running';
  const ids = { prompt: useId(), maxTokens: useId(), temperature: useId(), topK: useId(), topP: useId(), seed: useId() };
  const limits = model ?? { contextLength: 2, vocabSize: 1 };
  const { request, errors: allErrors } = parseGenerationForm(form, limits);
  // No error before there is a model to generate from (the limits are placeholders until then).
  const errors: typeof allErrors = model ? allErrors : {};

  // Leaving the page section cancels a generation still running.
  const cancelRef = useRef(onCancel);
  const runningRef = useRef(false);
  useEffect(() => {
    cancelRef.current = onCancel;
    runningRef.current = running;
  });
  useEffect(
    () => () => {
      if (runningRef.current) cancelRef.current();
    },
    [],
  );

  const generate = () => {
    if (!request || !model || running) return;
    const id = ++runId.current;
    const live = () => runId.current === id;
    setStatus('running');
    setStart(null);
    setPieces([]);
    setSelected(null);
    setError(null);
    setStop(null);
    setStepAtStart(model.step);
    onSelectToken?.(null);
    const sink: GenerationSink = {
      start: (s) => {
        if (live()) setStart(s);
      },
      tokens: (batch) => {
        if (live() && batch.length) setPieces((prev) => [...prev, ...batch]);
      },
    };
    onGenerate(request, sink).then(
      (done) => {
        if (!live()) return;
        setStop(done.stop);
        setStatus('done');
      },
      (e: unknown) => {
        if (!live()) return;
        setError(e instanceof Error ? e.message : String(e));
        setStatus('error');
      },
    );
  };

  const select = (i: number) => {
    const piece = pieces[i];
    if (!piece || !model || !start) return;
    setSelected(i);
    let snapshots: SelectionSnapshot[] = [];
    if (model.nsa) {
      try {
        snapshots = generationSnapshots(start, pieces, { ...model, nsa: model.nsa }, stepAtStart);
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e));
      }
    }
    onSelectToken?.({ piece, snapshots, focus: { source: 'decode', step: stepAtStart, t: piece.t } });
  };

  // Roving focus over the generated tokens: ←/→ (Home/End) move the selection.
  const onTokensKey = (e: KeyboardEvent<HTMLElement>) => {
    if (!pieces.length) return;
    const cur = selected ?? -1;
    const next =
      e.key === 'ArrowRight'
        ? cur + 1
        : e.key === 'ArrowLeft'
          ? cur - 1
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? pieces.length - 1
              : null;
    if (next === null) return;
    e.preventDefault();
    const i = Math.min(pieces.length - 1, Math.max(0, next));
    select(i);
    (e.currentTarget.querySelector(`[data-index="${i}"]`) as HTMLElement | null)?.focus();
  };

  const field = (name: GenerationField, label: string, input: ComponentProps<'input'>, id: string) => (
    <div className="gen-field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        data-testid={`gen-${name}`}
        value={form[name]}
        disabled={running || !model}
        aria-invalid={errors[name] !== undefined}
        aria-describedby={errors[name] ? `${id}-err` : undefined}
        onChange={(e) => setForm({ ...form, [name]: e.target.value })}
        {...input}
      />
      {errors[name] && (
        <span id={`${id}-err`} className="error-text gen-field-error" data-testid={`gen-${name}-error`}>
          {errors[name]}
        </span>
      )}
    </div>
  );

  const tabbable = selected ?? 0;
  const piece = selected !== null ? pieces[selected] : undefined;
  return (
    <FoldPanel title="Generate" className="gen" testId="generation" data={{ 'data-status': status }}>
      {!model && <p className="note">{disabledReason ?? 'Train a model first: generation samples from its current weights.'}</p>}
      <form
        className="gen-form"
        onSubmit={(e) => {
          e.preventDefault();
          generate();
        }}
      >
        <div className="gen-field gen-prompt">
          <label htmlFor={ids.prompt}>Prompt</label>
          <textarea
            id={ids.prompt}
            data-testid="gen-prompt-input"
            rows={2}
            value={form.prompt}
            disabled={running || !model}
            aria-invalid={errors.prompt !== undefined}
            aria-describedby={`${ids.prompt}-hint`}
            onChange={(e) => setForm({ ...form, prompt: e.target.value })}
            onKeyDown={(e) => {
              // Ctrl/⌘+Enter generates from the prompt box.
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                generate();
              }
            }}
          />
          <span
            id={`${ids.prompt}-hint`}
            className={errors.prompt ? 'error-text gen-field-error' : 'muted gen-hint'}
            data-testid={errors.prompt ? 'gen-prompt-error' : undefined}
          >
            {errors.prompt ?? promptHint ?? 'Ctrl+Enter generates.'}
          </span>
        </div>
        <div className="gen-settings">
          {field(
            'maxTokens',
            'Max tokens',
            { type: 'number', inputMode: 'numeric', min: 1, max: Math.max(1, limits.contextLength - 1), step: 1 },
            ids.maxTokens,
          )}
          {field(
            'temperature',
            'Temperature',
            { type: 'number', inputMode: 'decimal', min: 0, max: MAX_TEMPERATURE, step: 0.1 },
            ids.temperature,
          )}
          {field('topK', 'Top-k', { type: 'number', inputMode: 'numeric', min: 0, max: limits.vocabSize, step: 1 }, ids.topK)}
          {field('topP', 'Top-p', { type: 'number', inputMode: 'decimal', min: 0, max: 1, step: 0.05 }, ids.topP)}
          {field('seed', 'Seed', { type: 'number', inputMode: 'numeric', min: 0, step: 1 }, ids.seed)}
          <div className="gen-buttons">
            <button type="submit" data-testid="gen-start" disabled={!request || !model || running}>
              Generate
            </button>
            <button type="button" data-testid="gen-stop" disabled={!running} onClick={() => onCancel()}>
              Stop
            </button>
          </div>
        </div>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="gen-error">
          {error}
        </p>
      )}
      {(start || running) && (
        <div className="gen-out">
          <p className="muted gen-status" data-testid="gen-status" aria-live="polite">
            {running
              ? `Generating… ${pieces.length} token${pieces.length === 1 ? '' : 's'}`
              : `${pieces.length} token${pieces.length === 1 ? '' : 's'}${stop ? ` · ${STOP_TEXT[stop]}` : ''}`}
            {` · weights of step ${stepAtStart}`}
            {start?.decoder && <span data-testid="gen-decoder">{` · ${start.decoder}`}</span>}
            {pieces.length > 0 && ` · click a token to see the ${model?.dsa ? 'tokens' : 'blocks'} it selected`}
          </p>
          <div className="gen-text">
            <span className="gen-prompt-text" data-testid="gen-prompt-text" title="prompt">
              {start?.promptPieces.join('')}
            </span>
            <span
              className="gen-tokens"
              data-testid="gen-output"
              role="listbox"
              aria-label="Generated tokens"
              aria-orientation="horizontal"
              onKeyDown={onTokensKey}
            >
              {pieces.map((p) => (
                <span
                  key={p.index}
                  role="option"
                  className={`gen-token${selected === p.index ? ' is-selected' : ''}`}
                  data-testid="gen-token"
                  data-index={p.index}
                  data-t={p.t}
                  aria-selected={selected === p.index}
                  tabIndex={p.index === tabbable ? 0 : -1}
                  title={`token id ${p.token}, from query t = ${p.t}`}
                  onClick={() => select(p.index)}
                >
                  {p.text}
                </span>
              ))}
            </span>
          </div>
        </div>
      )}
      {piece && model && <TokenDetails piece={piece} model={model} />}
    </FoldPanel>
  );
}
