// The run configuration: preset, every model/NSA/training/data field in collapsible sections,
// validation messages next to the field they concern, derived facts, JSON import/export.
// Controlled: the page owns the RunConfig (and the uploaded text) and gets every edit.
import './config.css';

import { type ReactNode, useMemo, useState } from 'react';

import type { RunConfig } from '../../train/config';
import { DataPanel } from '../data/DataPanel';
import type { UploadedText } from '../data/upload';
import { stepSecondsFor } from '../run/step-estimate';
import { useStore } from '../store';
import { ConfigFileButtons } from './ConfigFileButtons';
import { configFacts } from './derived';
import { DerivedFacts } from './DerivedFacts';
import { diffConfig } from './diff';
import { editConfig } from './edit';
import { type FieldEdit, groupErrors, issueKey, withEditCauses } from './errors';
import { FieldInput } from './FieldInput';
import { sectionApplies, type SectionId, SECTIONS } from './fields';
import { runConfigErrors } from './parse';
import { getPath } from './paths';
import { PresetPicker } from './PresetPicker';
import { closestPreset } from './presets';

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

function Section({ id, title, count, children }: { id: SectionId; title: string; count: number; children: ReactNode }) {
  const [open, setOpen] = useState(true);
  return (
    <details
      className="cfg-section"
      data-testid={`config-section-${id}`}
      open={open || count > 0}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>
        {title}
        {count > 0 && (
          <span className="cfg-badge" aria-label={`${count} problem${count === 1 ? '' : 's'}`}>
            {count}
          </span>
        )}
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
  const stepSeconds =
    facts.params === null || facts.tokensPerStep === null ? null : stepSecondsFor(facts.params, facts.tokensPerStep, software);
  const set = (path: string) => (v: unknown) => change(editConfig(value, path, v));
  const countIn = (id: SectionId) =>
    [...byField.keys()].filter((p) => SECTIONS.find((s) => s.id === id)!.fields.some((f) => f.path === p)).length;

  return (
    <section className="panel config-panel" aria-labelledby="config-heading" data-testid="config-panel" data-valid={errors.length === 0}>
      <div className="cfg-head">
        <h2 id="config-heading">Configuration</h2>
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
      <DerivedFacts facts={facts} stepSeconds={stepSeconds} />
      <fieldset className="cfg-sections" disabled={disabled}>
        <legend className="visually-hidden">Run configuration fields</legend>
        {SECTIONS.map((s) => (
          <Section key={s.id} id={s.id} title={s.title} count={countIn(s.id)}>
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
              <p className="cfg-note muted">Used with NSA attention only: set Attention to NSA in the Model section to edit these.</p>
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
