// The NSA op with another head layout than op.test.ts: one head per group. That changes the
// query-row kernels' constants (compiled again, seconds each on SwiftShader), so this is one case;
// dk, dv and lSel match op.test.ts so the key-outer kernels are shared when both files run.
// Forward ≤ 1e-5, grads ≤ 1e-4 rel RMS, selection exact (op-harness.ts).
import { describe, it } from 'vitest';

import { type Case, checkCase } from './op-harness';

const CASES: Case[] = [
  {
    name: 'one head per group (H = G = 3), B = 2, T = 43, l = 4, d = 1, nSel = 4, w = 5',
    shape: { B: 2, T: 43, H: 3, G: 3, dk: 5, dv: 3 },
    cfg: { l: 4, d: 1, lSel: 8, nSel: 4, w: 5, phi: 'avg', forceInit: true, forceLocal: 1 },
  },
];

describe('NSA op, one head per group', () => {
  it.each(CASES)('$name', async (cs) => {
    await checkCase(cs, 77);
  });
});
