// The passkey task's inputs (data source 'passkey'): one number field per task setting, each with
// its validation messages (data.passkey.<field>).
import type { PasskeyTask } from '../../train/data/passkey';
import { FieldInput } from './FieldInput';
import { PASSKEY_FIELDS } from './fields';

export interface PasskeyTaskFieldsProps {
  task: PasskeyTask;
  onChange(task: PasskeyTask): void;
  disabled?: boolean;
  /** Validation messages by field path. */
  errors?: ReadonlyMap<string, readonly string[]>;
}

const NO_ERRORS: readonly string[] = [];

export function PasskeyTaskFields({ task, onChange, disabled, errors }: PasskeyTaskFieldsProps) {
  return (
    <div className="cfg-recall" data-testid="passkey-task-fields">
      {PASSKEY_FIELDS.map((f) => {
        const key = f.path.slice('data.passkey.'.length) as keyof PasskeyTask;
        return (
          <FieldInput
            key={f.path}
            spec={f}
            value={task[key]}
            errors={errors?.get(f.path) ?? NO_ERRORS}
            disabled={disabled}
            onChange={(v) => onChange({ ...task, [key]: v as number })}
          />
        );
      })}
    </div>
  );
}
