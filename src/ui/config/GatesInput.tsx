// The NSA gate ablation: none, force one branch (others' gates 0), or freeze the gates at a value
// (one for all branches, or one per branch).
import { useId } from 'react';

import { type GateAblation } from '../../definitions/gates';
import { BRANCHES } from '../../definitions/gates';
import { type Branch } from '../../definitions/gates';
import { NumberInput } from './NumberInput';

export interface GatesInputProps {
  id: string;
  value: GateAblation;
  onChange(g: GateAblation): void;
  disabled?: boolean;
  describedBy?: string;
  invalid: boolean;
  testId: string;
}

const CHOICES = [
  { value: 'none', label: 'none (learned gates)' },
  ...BRANCHES.map((b) => ({ value: `force:${b}`, label: `force ${b} (others off)` })),
  { value: 'freeze', label: 'freeze at a value' },
];

function choiceOf(g: GateAblation): string {
  return g.kind === 'force' ? `force:${g.branch}` : g.kind;
}

function fromChoice(choice: string, prev: GateAblation): GateAblation {
  if (choice.startsWith('force:')) return { kind: 'force', branch: choice.slice(6) as Branch };
  if (choice === 'freeze') return prev.kind === 'freeze' ? prev : { kind: 'freeze', value: 0.5 };
  return { kind: 'none' };
}

export function GatesInput({ id, value, onChange, disabled, describedBy, invalid, testId }: GatesInputProps) {
  const perBranchId = useId();
  const valueId = useId();
  const freeze = value.kind === 'freeze' ? value : null;
  const perBranch = freeze !== null && typeof freeze.value !== 'number';
  const triple: readonly number[] =
    freeze === null ? [] : typeof freeze.value === 'number' ? [freeze.value, freeze.value, freeze.value] : freeze.value;
  return (
    <div className="cfg-gates">
      <select
        id={id}
        data-testid={testId}
        value={choiceOf(value)}
        disabled={disabled}
        aria-invalid={invalid}
        aria-describedby={describedBy}
        onChange={(e) => onChange(fromChoice(e.target.value, value))}
      >
        {CHOICES.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {freeze && (
        <div className="cfg-gates-values">
          <label className="cfg-inline">
            <input
              type="checkbox"
              id={perBranchId}
              data-testid={`${testId}.perBranch`}
              checked={perBranch}
              disabled={disabled}
              onChange={(e) => onChange({ kind: 'freeze', value: e.target.checked ? [triple[0], triple[1], triple[2]] : triple[0] })}
            />
            per branch
          </label>
          {perBranch ? (
            BRANCHES.map((b, i) => (
              <label key={b} className="cfg-inline">
                {b}
                <NumberInput
                  className="cfg-number-small"
                  data-testid={`${testId}.${b}`}
                  value={triple[i]}
                  disabled={disabled}
                  aria-invalid={invalid}
                  aria-describedby={describedBy}
                  onValue={(v) => onChange({ kind: 'freeze', value: triple.map((x, j) => (j === i ? v : x)) as [number, number, number] })}
                />
              </label>
            ))
          ) : (
            <>
              <label htmlFor={valueId}>value</label>
              <NumberInput
                id={valueId}
                className="cfg-number-small"
                data-testid={`${testId}.value`}
                value={freeze.value}
                disabled={disabled}
                aria-invalid={invalid}
                aria-describedby={describedBy}
                onValue={(v) => onChange({ kind: 'freeze', value: v })}
              />
            </>
          )}
        </div>
      )}
    </div>
  );
}
