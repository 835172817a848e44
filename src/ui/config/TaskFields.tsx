// A synthetic task's inputs (data sources 'recall' and 'passkey'): one number field per task
// setting, each with its validation messages (data.<task>.<field>).
import type { PasskeyTask } from '../../train/data/passkey';
import type { RecallTask } from '../../train/data/recall';
import { FieldInput } from './FieldInput';
import { PASSKEY_FIELDS, RECALL_FIELDS } from './fields';

const TASKS = {
  recall: RECALL_FIELDS,
  passkey: PASSKEY_FIELDS,
} as const;

type TaskOf = { recall: RecallTask; passkey: PasskeyTask };

export interface TaskFieldsProps<K extends keyof TaskOf> {
  kind: K;
  task: TaskOf[K];
  onChange(task: TaskOf[K]): void;
  disabled?: boolean;
  /** Validation messages by field path. */
  errors?: ReadonlyMap<string, readonly string[]>;
}

const NO_ERRORS: readonly string[] = [];

export function TaskFields<K extends keyof TaskOf>({ kind, task, onChange, disabled, errors }: TaskFieldsProps<K>) {
  const prefix = `data.${kind}.`;
  return (
    <div className="cfg-recall" data-testid={`${kind}-task-fields`}>
      {TASKS[kind].map((f) => {
        const key = f.path.slice(prefix.length) as keyof TaskOf[K];
        return (
          <FieldInput
            key={f.path}
            spec={f}
            value={task[key] as number}
            errors={errors?.get(f.path) ?? NO_ERRORS}
            disabled={disabled}
            onChange={(v) => onChange({ ...task, [key]: v as number })}
          />
        );
      })}
    </div>
  );
}
