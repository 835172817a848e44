// The three NSA branches in gate-column order and the gate ablations (docs/nsa-spec.md, "Gates").

export type Branch = 'cmp' | 'sel' | 'win';
/** Gate column c of head i is 3i + c, in this order. */
export const BRANCHES: readonly Branch[] = ['cmp', 'sel', 'win'];

/** Ablations: gates replaced by constants (force: that branch 1, the others 0). */
export type GateAblation =
  { kind: 'none' } | { kind: 'force'; branch: Branch } | { kind: 'freeze'; value: number | readonly [number, number, number] };

/**
 * A gate ablation from its text form, as `--set model.nsa.gates=…` writes it: `none`,
 * `force:cmp|sel|win` (that branch 1, the others 0), `freeze:G` (every gate G in [0, 1]) or
 * `freeze:Gcmp,Gsel,Gwin`. Throws an Error saying which forms exist.
 */
export function parseGateAblation(text: string): GateAblation {
  const forms = "'none', 'force:cmp|sel|win', 'freeze:G' or 'freeze:Gcmp,Gsel,Gwin' (each G in [0, 1])";
  const [kind, arg, extra] = text.trim().split(':');
  if (extra !== undefined) throw new Error(`'${text}' is not a gate ablation: expected ${forms}`);
  if (kind === 'none' && arg === undefined) return { kind: 'none' };
  if (kind === 'force' && arg !== undefined && (BRANCHES as readonly string[]).includes(arg))
    return { kind: 'force', branch: arg as Branch };
  if (kind === 'freeze' && arg !== undefined) {
    const values = arg.split(',').map((s) => (/^\s*(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(s) ? Number(s) : NaN));
    if (values.every((v) => v >= 0 && v <= 1)) {
      if (values.length === 1) return { kind: 'freeze', value: values[0] };
      if (values.length === 3) return { kind: 'freeze', value: [values[0], values[1], values[2]] };
    }
  }
  throw new Error(`'${text}' is not a gate ablation: expected ${forms}`);
}

/** The text form parseGateAblation reads (`none`, `force:sel`, `freeze:0.5`, `freeze:1,0,0`). */
export function formatGateAblation(g: GateAblation): string {
  if (g.kind === 'none') return 'none';
  if (g.kind === 'force') return `force:${g.branch}`;
  return `freeze:${typeof g.value === 'number' ? g.value : g.value.join(',')}`;
}
