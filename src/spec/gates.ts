// The three NSA branches in gate-column order and the gate ablations (docs/nsa-spec.md, "Gates").

export type Branch = 'cmp' | 'sel' | 'win';
/** Gate column c of head i is 3i + c, in this order. */
export const BRANCHES: readonly Branch[] = ['cmp', 'sel', 'win'];

/** Ablations: gates replaced by constants (force: that branch 1, the others 0). */
export type GateAblation =
  { kind: 'none' } | { kind: 'force'; branch: Branch } | { kind: 'freeze'; value: number | readonly [number, number, number] };
