// Property 3: all heads of a group use the group's one selection. Checked by its consequences:
// P is the sum of the group's heads' p_slc, and perturbing K_sel/V_sel of group g at a position
// changes O_sel of (t, every head of g) iff the position lies in a block the group selected at t.
import { describe, expect, it } from 'vitest';

import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { selectedForwardRef } from '../../src/reference/nsa/selected';
import { rng } from '../helpers/compare';
import { CASES, randomInputs, sameBits } from './helpers';

const PICK = ['base T=37', 'one group', 'one head per group', 'forceInit false, no forced blocks', 'phi = mlp'];

describe('property 3: group consistency', () => {
  // nSel = 2 so that every case has unselected candidate blocks.
  it.each(CASES.filter((k) => PICK.includes(k.name)).map((k) => [k.name, k] as const))('%s (nSel = 2)', (_n, k) => {
    const c = { ...k.c, nSel: 2 };
    const shape = k.shape;
    const { T, H, G, dk, dv } = shape;
    const h = H / G;
    const inp = randomInputs(shape, c, 41);
    const f = nsaForwardRef(inp, shape, c);
    const nB = f.nBlocks;
    for (let t = 0; t < T; t++) {
      for (let g = 0; g < G; g++) {
        for (let j = 0; j < nB; j++) {
          let s = 0;
          for (let i = g * h; i < (g + 1) * h; i++) s += f.pSlc[(t * H + i) * nB + j];
          expect(f.scores[(t * G + g) * nB + j]).toBe(s);
        }
      }
    }
    const r = rng(42);
    let seenIn = 0;
    let seenOut = 0;
    for (let trial = 0; trial < 32; trial++) {
      const t = Math.floor(r() * T);
      const g = Math.floor(r() * G);
      const row = Array.from(f.selection.subarray((t * G + g) * c.nSel, (t * G + g + 1) * c.nSel));
      // Alternate: a position in a selected block, then one in an unselected block when t has one.
      const want = trial % 2 === 0;
      const pool: number[] = [];
      for (let s = 0; s <= t; s++) if (row.includes(Math.floor(s / c.lSel)) === want) pool.push(s);
      if (pool.length === 0) continue;
      const s = pool[Math.floor(r() * pool.length)];
      const inSel = want;
      const kSel = Float64Array.from(inp.kSel);
      const vSel = Float64Array.from(inp.vSel);
      for (let e = 0; e < dk; e++) kSel[(s * G + g) * dk + e] += 0.7;
      for (let e = 0; e < dv; e++) vSel[(s * G + g) * dv + e] += 0.7;
      const o2 = selectedForwardRef(inp.q, kSel, vSel, f.selection, shape, c).o;
      for (let i = 0; i < H; i++) {
        const a = f.sel.o.subarray((t * H + i) * dv, (t * H + i + 1) * dv);
        const b = o2.subarray((t * H + i) * dv, (t * H + i + 1) * dv);
        const ownGroup = Math.floor(i / h) === g;
        expect(sameBits(a, b), `t=${t} head ${i} group ${g} pos ${s} selected=${inSel}`).toBe(!(ownGroup && inSel));
      }
      if (inSel) seenIn++;
      else seenOut++;
    }
    expect(seenIn).toBeGreaterThan(0);
    expect(seenOut).toBeGreaterThan(0);
  });
});
