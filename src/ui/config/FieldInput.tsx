// One config field: its label, input, hint and validation messages (linked by aria-describedby).
import type { GateAblation } from '../../definitions/gates';
import { FIELD_HELP } from './field-help';
import { errorDomId, fieldDomId, type FieldSpec } from './fields';
import { GatesInput } from './GatesInput';
import { NumberInput } from './NumberInput';

export interface FieldInputProps {
  spec: FieldSpec;
  value: unknown;
  onChange(v: unknown): void;
  /** Validation messages for this field (empty when valid). */
  errors: readonly string[];
  disabled?: boolean;
}

export function FieldInput({ spec, value: given, onChange, errors, disabled }: FieldInputProps) {
  // An optional setting a config leaves out shows what its absence means.
  const value = given === undefined && spec.absent !== undefined ? spec.absent : given;
  const id = fieldDomId(spec.path);
  const hintId = `${id}-hint`;
  const errorId = errorDomId(spec.path);
  const invalid = errors.length > 0;
  const describedBy = [invalid ? errorId : null, spec.hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  const common = { id, disabled, 'aria-invalid': invalid, 'aria-describedby': describedBy, 'data-testid': `config-field-${spec.path}` };
  const k = spec.kind;
  let control;
  if (k.type === 'int' || k.type === 'number') {
    control = <NumberInput {...common} integer={k.type === 'int'} value={value} onValue={onChange} />;
  } else if (k.type === 'select') {
    const known = k.options.some((o) => o.value === value);
    control = (
      <select {...common} value={String(value)} onChange={(e) => onChange(e.target.value)}>
        {!known && <option value={String(value)}>{String(value)} (unknown)</option>}
        {k.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    );
  } else if (k.type === 'checkbox') {
    control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
  } else {
    control = (
      <GatesInput
        id={id}
        testId={common['data-testid']}
        value={value as GateAblation}
        onChange={onChange}
        disabled={disabled}
        describedBy={describedBy}
        invalid={invalid}
      />
    );
  }
  const help = FIELD_HELP[spec.path];
  const label = (
    <>
      <label htmlFor={id} title={help}>
        {spec.label}
      </label>
      {help && (
        <span
          className="cfg-help"
          tabIndex={0}
          title={help}
          aria-label={`About ${spec.label}: ${help}`}
          data-testid={`config-help-${spec.path}`}
        >
          ?
        </span>
      )}
    </>
  );
  const notes = (
    <>
      {spec.hint && (
        <span id={hintId} className="cfg-hint">
          {spec.hint}
        </span>
      )}
      {invalid && (
        <span id={errorId} className="cfg-error" data-testid={`config-error-${spec.path}`}>
          {errors.join(' · ')}
        </span>
      )}
    </>
  );
  if (k.type === 'checkbox') {
    return (
      <div className="cfg-field cfg-kind-checkbox" data-invalid={invalid || undefined}>
        <span className="cfg-inline">
          {control}
          {label}
        </span>
        {notes}
      </div>
    );
  }
  return (
    <div className={`cfg-field cfg-kind-${k.type}`} data-invalid={invalid || undefined}>
      <span className="cfg-label">{label}</span>
      <div className="cfg-control">
        {control}
        {notes}
      </div>
    </div>
  );
}
