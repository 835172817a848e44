// The recall task's inputs (data source 'recall'): one number field per task setting, each with
// its validation messages (data.recall.<field>).
import type { RecallTask } from '../../train/data/recall';
import { FieldInput } from './FieldInput';
import { RECALL_FIELDS } from './fields';

export interface RecallTaskFieldsProps {
  task: RecallTask;
  onChange(task: RecallTask): void;
  disabled?: boolean;
  /** Validation messages by field path. */
  errors?: ReadonlyMap<string, readonly string[]>;
}

const NO_ERRORS: readonly string[] = [];

export function RecallTaskFields({ task, onChange, disabled, errors }: RecallTaskFieldsProps) {
  return (
    <div className="cfg-recall" data-testid="recall-task-fields">
      {RECALL_FIELDS.map((f) => {
        const key = f.path.slice('data.recall.'.length) as keyof RecallTask;
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
