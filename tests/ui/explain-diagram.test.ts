// The "How NSA works" diagram: its blocks follow the spec's definitions, checked by brute force
// over positions, and its read counts add up to the blocks it draws.
import { describe, expect, it } from 'vitest';

import type { NsaConfig } from '../../src/definitions/nsa-config';
import { preset } from '../../src/train/presets/presets';
import { explainDiagram } from '../../src/ui/explain/diagram';

const tiny = preset('tiny').model.nsa as NsaConfig;

describe('explain diagram', () => {
  it('compressed blocks are those ending at or before t; candidates start at or before t; the window is the last w', () => {
    for (const c of [
      tiny,
      { ...tiny, l: 16, d: 8, lSel: 16, nSel: 2, w: 4, forceInit: false, forceLocal: 0 },
      { ...tiny, forceLocal: 2 },
    ]) {
      const T = 64;
      for (let t = 0; t < T; t++) {
        const d = explainDiagram(T, t, c);
        const cmp: number[] = [];
        for (let k = 0; k * c.d + c.l - 1 <= t; k++) cmp.push(k);
        expect(d.cmp.map((b) => b.start)).toEqual(cmp.map((k) => k * c.d));
        expect(d.cmp.every((b) => b.end - b.start === c.l && b.end - 1 <= t)).toBe(true);
        const cand = [...Array(T).keys()].filter((j) => j * c.lSel <= t);
        expect(d.sel.map((b) => b.index)).toEqual(cand);
        const read = d.sel.filter((b) => b.role !== 'candidate');
        expect(read.length).toBe(Math.min(c.nSel, cand.length));
        if (c.forceInit) expect(d.sel[0].role).toBe('forced');
        if (c.forceLocal >= 1) {
          expect(d.sel.at(-1)?.role).toBe('forced');
          // Every drawn block clipped to ≤ t: the selected positions the reads count.
          expect(read.reduce((s, b) => s + b.end - b.start, 0)).toBe(d.reads.sel);
        }
        expect(d.window).toEqual({ start: Math.max(0, t - c.w + 1), end: t + 1 });
        expect(d.reads.cmp).toBe(cmp.length);
        expect(d.reads.total).toBe(d.reads.cmp + d.reads.sel + d.reads.win);
        expect(d.reads.dense).toBe(t + 1);
      }
    }
  });

  it('the tiny preset shows sparsity early: from t = 24 some candidate block is not read', () => {
    expect(explainDiagram(64, 23, tiny).sel.some((b) => b.role === 'candidate')).toBe(false);
    expect(explainDiagram(64, 24, tiny).sel.some((b) => b.role === 'candidate')).toBe(true);
    const last = explainDiagram(64, 63, tiny);
    expect(last.sel.filter((b) => b.role === 'candidate')).toHaveLength(5);
    expect(last.pickedByScore).toBe(1);
  });

  it('refuses a query outside the sequence', () => {
    expect(() => explainDiagram(64, 64, tiny)).toThrow(/query t = 64 outside \[0, 64\)/);
    expect(() => explainDiagram(64, -1, tiny)).toThrow(/outside/);
  });
});
