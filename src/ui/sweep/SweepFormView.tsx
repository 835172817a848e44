// The new-sweep form: a task preset of `npm run learn`, the mechanisms, seeds and learning rates to
// cross, optional overrides of the preset's steps, batch and evaluation, and the target accuracy
// that ends a setting early. It says how many settings the grid holds, or what is wrong.
import { useMemo, useState } from 'react';

import type { LearnGrid } from '../../train/learn/grid';
import { DEFAULT_MECHANISMS, LEARN_PRESETS, type LearnPreset, type Mechanism, MECHANISM_NAMES } from '../../train/learn/grid';
import { defaultSweepForm, presetDefaults, readSweepForm, type SweepForm } from './sweep-form';

interface Props {
  disabledReason: string | null;
  onStart(grid: LearnGrid, name: string): void;
}

const TEXT_FIELDS = [
  { key: 'seeds', label: 'Seeds', hint: 'comma-separated integers' },
  { key: 'lrs', label: 'Learning rates', hint: 'comma-separated' },
  { key: 'steps', label: 'Steps', hint: 'per setting' },
  { key: 'batchSize', label: 'Batch size', hint: '' },
  { key: 'evalEvery', label: 'Evaluate every', hint: 'steps' },
  { key: 'evalBatches', label: 'Evaluation batches', hint: '' },
  {
    key: 'budget',
    label: 'Key budget',
    hint: 'key rows per query at the last position that NSA, window and MoBA are matched to; empty: sized from the preset',
  },
  { key: 'target', label: 'Target accuracy (%)', hint: 'a setting stops at the first evaluation reaching it' },
] as const;

export function SweepFormView({ disabledReason, onStart }: Props) {
  const [form, setForm] = useState<SweepForm>(() => defaultSweepForm('mqar-tiny', DEFAULT_MECHANISMS));
  const reading = useMemo(() => readSweepForm(form), [form]);
  const defaults = useMemo(() => presetDefaults(form.preset), [form.preset]);
  const toggle = (m: Mechanism) =>
    setForm((f) => ({ ...f, mechanisms: f.mechanisms.includes(m) ? f.mechanisms.filter((x) => x !== m) : [...f.mechanisms, m] }));
  const steps = Number(form.steps || defaults.steps);
  return (
    <form
      className="sweep-form"
      data-testid="sweep-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (!reading.problems.length && !disabledReason) onStart(reading.grid, form.name);
      }}
    >
      <label>
        Name{' '}
        <input
          data-testid="sweep-name-input"
          value={form.name}
          placeholder="preset and time"
          onChange={(e) => setForm({ ...form, name: e.target.value })}
        />
      </label>
      <label>
        Task preset{' '}
        <select
          data-testid="sweep-preset"
          value={form.preset}
          onChange={(e) => setForm({ ...form, preset: e.target.value as LearnPreset })}
        >
          {LEARN_PRESETS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <fieldset className="sweep-mechanisms">
        <legend>Mechanisms</legend>
        {MECHANISM_NAMES.map((m) => (
          <label key={m}>
            <input type="checkbox" data-testid={`sweep-mechanism-${m}`} checked={form.mechanisms.includes(m)} onChange={() => toggle(m)} />{' '}
            {m}
          </label>
        ))}
      </fieldset>
      {TEXT_FIELDS.map((f) => (
        <label key={f.key} title={f.hint || undefined}>
          {f.label}{' '}
          <input
            data-testid={`sweep-${f.key}`}
            inputMode="decimal"
            value={form[f.key]}
            placeholder={f.key in defaults ? defaults[f.key as keyof typeof defaults] : undefined}
            onChange={(e) => setForm({ ...form, [f.key]: e.target.value })}
          />
        </label>
      ))}
      <p className="muted" data-testid="sweep-size" data-settings={reading.settings}>
        {reading.problems.length
          ? 'The grid has problems:'
          : `${reading.settings} setting${reading.settings === 1 ? '' : 's'}, up to ${Number.isFinite(steps) ? steps.toLocaleString('en-US') : '?'} steps each, one after another on this GPU; each is a run of the library.`}
      </p>
      {reading.problems.length > 0 && (
        <ul className="error-text" data-testid="sweep-problems">
          {reading.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      <button
        type="submit"
        data-testid="sweep-start"
        disabled={reading.problems.length > 0 || disabledReason !== null}
        title={disabledReason ?? undefined}
      >
        Start sweep
      </button>
    </form>
  );
}
