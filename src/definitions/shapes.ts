// Tensor shapes shared by the kernels, the model and the float64 reference, and the one check of a
// sequence's attention dims that the NSA and DSA config validations both run.
import type { ConfigIssue } from './config-issue';

/** Attention dims; the one shape type of the dense and NSA attention kernels, the NSA core and their references. */
export interface AttentionShape {
  B: number;
  T: number;
  H: number;
  G: number;
  dk: number;
  dv: number;
}

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/**
 * The issues of one sequence's attention dims (fields `shape.T`, `shape.H`, …): T an integer ≥ 0,
 * H, G, dk, dv integers ≥ 1, H a multiple of G. Absent dims are not checked.
 */
export function attentionShapeIssues(shape: Partial<Omit<AttentionShape, 'B'>>): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  const { T, H, G, dk, dv } = shape;
  if (T !== undefined && (!isInt(T) || T < 0)) out.push({ field: 'shape.T', message: `T must be an integer ≥ 0 (got ${T})` });
  for (const [name, v] of [
    ['H', H],
    ['G', G],
    ['dk', dk],
    ['dv', dv],
  ] as const) {
    if (v !== undefined && (!isInt(v) || v < 1)) out.push({ field: `shape.${name}`, message: `${name} must be an integer ≥ 1 (got ${v})` });
  }
  if (isInt(H) && isInt(G) && H >= 1 && G >= 1 && H % G !== 0)
    out.push({ field: 'shape.H', message: `H (${H}) must be a multiple of G (${G})` });
  return out;
}
