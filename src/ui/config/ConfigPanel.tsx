// The run configuration: preset, every model/attention mechanism/training/data field in sections folded to one line each,
// validation messages next to the field they concern, derived facts, JSON import/export.
// Controlled: the page owns the RunConfig (and the uploaded text) and gets every edit.
import './config.css';

import { type ReactNode, useMemo, useState } from 'react';

import type { RunConfig } from '../../train/config';
import { DataPanel } from '../data/DataPanel';
import type { UploadedText } from '../data/upload';
import { useAdapterRate } from '../run/calibration';
import { stepSecondsFor } from '../run/step-estimate';
import { useStore } from '../store';
import { ConfigFileButtons } from './ConfigFileButtons';
import { configFacts } from './derived';
import { DerivedFacts } from './DerivedFacts';
import { diffConfig } from './diff';
import { editConfig } from './edit';
import { type FieldEdit, groupErrors, issueKey, withEditCauses } from './errors';
import { FieldInput } from './FieldInput';
import { ATTENTION_NAMES, sectionApplies, type SectionId, SECTIONS } from './fields';
import { runConfigErrors } from './parse';
import { getPath } from './paths';
import { PresetPicker } from './PresetPicker';
import { closestPreset } from './presets';
import { sectionSummary } from './section-summary';

export interface ConfigPanelProps {
  value: RunConfig;
  onChange(c: RunConfig): void;
  /** While a run is active: everything is read-only. */
  disabled?: boolean;
  /** The uploaded training text (data source 'upload'); kept inside the panel when not given. */
  upload?: UploadedText | null;
  onUpload?(u: UploadedText): void;
}

const NO_ERRORS: readonly string[] = [];

function problemText(n: number): string {
  return n === 1 ? 'One setting needs fixing before a run can start.' : `${n} settings need fixing before a run can start.`;
}

interface SectionProps {
  id: SectionId;
  title: string;
  /** Its values in one line, shown beside the title. */
  summary: string;
  count: number;
  open: boolean;
  onOpen(open: boolean): void;
  children: ReactNode;
}

/** A folded section (open while it holds a problem), its values summed up in one line. */
function Section({ id, title, summary, count, open, onOpen, children }: SectionProps) {
  return (
    <details
      className="cfg-section"
      data-testid={`config-section-${id}`}
      open={open || count > 0}
      onToggle={(e) => {
        if (e.currentTarget.open !== open) onOpen(e.currentTarget.open);
      }}
    >
      <summary>
        {title}
        {count > 0 && (
          <span className="cfg-badge" aria-label={`${count} problem${count === 1 ? '' : 's'}`}>
            {count}
          </span>
        )}
        <span className="cfg-section-summary muted" data-testid={`config-summary-${id}`}>
          {summary}
        </span>
      </summary>
      <div className="cfg-fields">{children}</div>
    </details>
  );
}

export function ConfigPanel({ value, onChange, disabled, upload, onUpload }: ConfigPanelProps) {
  const [ownUpload, setOwnUpload] = useState<UploadedText | null>(null);
  const errors = useMemo(() => runConfigErrors(value), [value]);
  const grouped = useMemo(() => groupErrors(errors), [errors]);
  // The last single-field edit (of the config now shown): errors it caused elsewhere show at it too.
  const [edit, setEdit] = useState<(FieldEdit & { config: RunConfig }) | null>(null);
  const lastEdit = edit && edit.config === value ? edit : null;
  const byField = useMemo(() => withEditCauses(grouped.byField, errors, lastEdit), [grouped, errors, lastEdit]);
  const change = (next: RunConfig) => {
    const changed = Object.keys(diffConfig(value, next));
    setEdit(changed.length === 1 ? { path: changed[0], before: new Set(errors.map(issueKey)), config: next } : null);
    onChange(next);
  };
  const facts = useMemo(() => configFacts(value, errors), [value, errors]);
  const software = useStore((s) => (s.adapter.status === 'ready' ? s.adapter.summary.software : true));
  // From the facts' own parameter and token counts (not counted again).
  // Calibrated by this adapter's measured first steps once a run has taken them (run/calibration.ts).
  const rate = useAdapterRate();
  const stepSeconds =
    facts.params === null || facts.tokensPerStep === null
      ? null
      : stepSecondsFor(facts.params, facts.tokensPerStep, software, rate?.flopsPerSecond ?? null);
  const set = (path: string) => (v: unknown) => change(editConfig(value, path, v));
  // Every section starts folded (the page opens on the experiment, not on a form); "Expand all" opens them.
  const [openIds, setOpenIds] = useState<ReadonlySet<SectionId>>(() => new Set());
  const allOpen = SECTIONS.every((s) => openIds.has(s.id));
  const openSection = (id: SectionId) => (open: boolean) =>
    setOpenIds((ids) => {
      const next = new Set(ids);
      if (open) next.add(id);
      else next.delete(id);
      return next;
    });
  const countIn = (id: SectionId) =>
    [...byField.keys()].filter((p) => SECTIONS.find((s) => s.id === id)!.fields.some((f) => f.path === p)).length;

  return (
    <section className="panel config-panel" aria-labelledby="config-heading" data-testid="config-panel" data-valid={errors.length === 0}>
      <div className="cfg-head">
        <h2 id="config-heading">Configuration</h2>
        <button
          type="button"
          className="link-button"
          data-testid="config-expand-all"
          aria-expanded={allOpen}
          onClick={() => setOpenIds(allOpen ? new Set() : new Set(SECTIONS.map((s) => s.id)))}
        >
          {allOpen ? 'Collapse all' : 'Expand all'}
        </button>
        <ConfigFileButtons value={value} onImport={onChange} preset={closestPreset(value)} disabled={disabled} />
      </div>
      <PresetPicker value={value} onChange={onChange} disabled={disabled} />
      {errors.length > 0 && (
        <div className="cfg-summary" data-testid="config-errors" role="status">
          {problemText(grouped.byField.size + grouped.other.length)}
          {grouped.other.length > 0 && (
            <ul>
              {grouped.other.map((e) => (
                <li key={`${e.field}:${e.message}`}>
                  {e.field}: {e.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      <DerivedFacts facts={facts} stepSeconds={stepSeconds} measuredSteps={rate?.steps ?? null} steps={value.train.steps} />
      <fieldset className="cfg-sections" disabled={disabled}>
        <legend className="visually-hidden">Run configuration fields</legend>
        {SECTIONS.map((s) => (
          <Section
            key={s.id}
            id={s.id}
            title={s.title}
            summary={sectionSummary(s.id, value)}
            count={countIn(s.id)}
            open={openIds.has(s.id)}
            onOpen={openSection(s.id)}
          >
            {s.id === 'data' ? (
              <DataPanel
                data={value.data}
                onChange={(d) => change({ ...value, data: d })}
                upload={upload === undefined ? ownUpload : upload}
                onUpload={onUpload ?? setOwnUpload}
                disabled={disabled}
                errors={byField}
              />
            ) : !sectionApplies(s.id, value) ? (
              <p className="cfg-note muted" data-testid={`config-unused-${s.id}`}>
                Used with {ATTENTION_NAMES[s.id]} attention only: set Attention to {ATTENTION_NAMES[s.id]} in the Model section to edit
                these.
              </p>
            ) : (
              s.fields.map((f) => (
                <FieldInput
                  key={f.path}
                  spec={f}
                  value={getPath(value, f.path)}
                  onChange={set(f.path)}
                  errors={byField.get(f.path) ?? NO_ERRORS}
                  disabled={disabled}
                />
              ))
            )}
          </Section>
        ))}
      </fieldset>
    </section>
  );
}
