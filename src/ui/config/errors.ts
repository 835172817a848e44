// Validation errors → the input they belong to. The engine names some fields by the NSA spec's
// shape names (model.H for nHeads…) or a whole object (model.nsa, model.window, model.moba, model.dsa, data.recall, data.passkey); those map to the
// input a user would change.
import type { ConfigIssue } from '../../definitions/config-issue';
import { fieldSpec } from './fields';

const ALIASES: Record<string, string> = {
  'model.nsa': 'model.attention',
  'model.window': 'model.attention',
  'model.moba': 'model.attention',
  'model.dsa': 'model.attention',
  'data.recall': 'data.source',
  'data.passkey': 'data.source',
  'model.H': 'model.nHeads',
  'model.G': 'model.nKvGroups',
  'model.T': 'model.seqLen',
};

/** The field path an error belongs to, or null when no single input does. */
export function errorFieldPath(field: string): string | null {
  const path = ALIASES[field] ?? field;
  return fieldSpec(path) ? path : null;
}

export interface GroupedErrors {
  /** Field path → its messages, in validation order. */
  byField: Map<string, string[]>;
  /** Errors that belong to no input (shown in the panel's summary). */
  other: ConfigIssue[];
}

export function groupErrors(errors: readonly ConfigIssue[]): GroupedErrors {
  const byField = new Map<string, string[]>();
  const other: ConfigIssue[] = [];
  for (const e of errors) {
    const path = errorFieldPath(e.field);
    if (path === null) other.push(e);
    else byField.set(path, [...(byField.get(path) ?? []), e.message]);
  }
  return { byField, other };
}

/** One field's edit: its path and the errors the config had before it (by issueKey). */
export interface FieldEdit {
  path: string;
  before: ReadonlySet<string>;
}

export const issueKey = (e: ConfigIssue): string => `${e.field}\u0000${e.message}`;

/**
 * The errors an edit caused at other inputs or none (l = 99999999 breaks "d must divide l" at d),
 * as "field: message": shown at the edited field too, so a value is never refused only elsewhere.
 */
export function editCauses(errors: readonly ConfigIssue[], edit: FieldEdit): string[] {
  return errors
    .filter((e) => errorFieldPath(e.field) !== edit.path && !edit.before.has(issueKey(e)))
    .map((e) => `${e.field}: ${e.message}`);
}

/** `byField` with the edit's causes added to the edited field (the same map when there are none). */
export function withEditCauses(
  byField: ReadonlyMap<string, string[]>,
  errors: readonly ConfigIssue[],
  edit: FieldEdit | null,
): ReadonlyMap<string, string[]> {
  const caused = edit ? editCauses(errors, edit) : [];
  if (!edit || caused.length === 0) return byField;
  const out = new Map(byField);
  out.set(edit.path, [...(byField.get(edit.path) ?? []), ...caused]);
  return out;
}
