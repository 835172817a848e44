// The NSA op with another head layout than op.test.ts (one head per group, dk = dv, nSel = 4,
// lSel = 12): a second set of kernel constants, kept to one case since each set compiles for
// seconds on SwiftShader. Forward ≤ 1e-5, grads ≤ 1e-4 rel RMS, selection exact (op-harness.ts).
import { describe, it } from 'vitest';
import { checkCase, type Case } from './op-harness';

const CASES: Case[] = [
  {
    name: 'one head per group (H = G = 3), B = 2, dk = dv = 8, l = 6, d = 3, lSel = 12, nSel = 4, w = 5',
    shape: { B: 2, T: 43, H: 3, G: 3, dk: 8, dv: 8 },
    cfg: { l: 6, d: 3, lSel: 12, nSel: 4, w: 5, phi: 'avg', forceInit: true, forceLocal: 1 },
  },
];

describe('NSA op, one head per group', () => {
  it.each(CASES)('$name', async (cs) => {
    await checkCase(cs, 77);
  });
});
