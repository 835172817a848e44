// Snapshots built from the float64 NSA reference on random inputs: real selections and scores.
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import type { SelectionSnapshot } from '../../src/definitions/selection-snapshot';
import { type NsaForward, nsaForwardRef } from '../../src/reference/nsa/layer';
import { randomInputs, type TestInputs } from '../nsa/helpers';

export interface RefSnapshots {
  inp: TestInputs;
  fwd: NsaForward;
  snaps: SelectionSnapshot[];
}

/** One snapshot per group of one sequence, tokens 0..T−1 cycling through 0..96. */
export function refSnapshots(shape: NsaShape, c: NsaConfig, seed: number, step = 5, layer = 0): RefSnapshots {
  const { T, H, G } = shape;
  const inp = randomInputs(shape, c, seed);
  const fwd = nsaForwardRef(inp, shape, c);
  const nb = fwd.nBlocks;
  const hpg = H / G;
  const tokens = Int32Array.from({ length: T }, (_, t) => (t * 7) % 97);
  const snaps = Array.from({ length: G }, (_, g) => {
    const s: SelectionSnapshot = {
      step,
      layer,
      group: g,
      T,
      cfg: c,
      H,
      G,
      tokens,
      sel: new Int32Array(T * c.nSel),
      scores: new Float32Array(T * nb),
      gates: new Float32Array(T * hpg * 3),
    };
    for (let t = 0; t < T; t++) {
      s.sel.set(fwd.selection.subarray((t * G + g) * c.nSel, (t * G + g + 1) * c.nSel), t * c.nSel);
      s.scores!.set(fwd.scores.subarray((t * G + g) * nb, (t * G + g + 1) * nb), t * nb);
      s.gates!.set(inp.gates.subarray((t * H + g * hpg) * 3, (t * H + (g + 1) * hpg) * 3), t * hpg * 3);
    }
    return s;
  });
  return { inp, fwd, snaps };
}
