// The stepper's arithmetic against brute force over positions and against src/definitions/nsa-blocks.ts:
// window band, compressed frontier, cell kinds, row bins, keys, heatmap hit-testing, ticks.
import { describe, expect, it } from 'vitest';

import { forcedBlocks, numSelCandidates, visibleCmpBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { cellFacts, gateMeans, whyBlock } from '../../src/ui/stepper/cell-facts';
import { cellKind, clampT, cmpFrontier, rowBins, stepKey, windowBlocks, windowSpan } from '../../src/ui/stepper/geometry';
import { blockX, heatmapLayout, hitCell, posX, rowY, ticks } from '../../src/ui/stepper/heatmap-layout';
import { CASES } from '../nsa/helpers';
import { refSnapshots } from './stepper-fixtures';

const CONFIGS: NsaConfig[] = [
  ...CASES.map((c) => c.c),
  { l: 32, d: 16, lSel: 64, nSel: 16, w: 512, phi: 'avg', forceInit: true, forceLocal: 2 },
  { l: 8, d: 4, lSel: 16, nSel: 3, w: 16, phi: 'avg', forceInit: true, forceLocal: 1 },
];

describe('window band and compressed frontier vs brute force', () => {
  it.each(CONFIGS.map((c, i) => [JSON.stringify(c), i] as const))('%s', (_n, i) => {
    const c = CONFIGS[i];
    // Collected and compared once per config (one expect per value is slow).
    const got: unknown[] = [];
    const want: unknown[] = [];
    for (let t = 0; t < 700; t++) {
      // Window: the positions s ≤ t with t − s < w, and the blocks those positions fall in.
      let lo = Infinity;
      let jLo = Infinity;
      let jHi = -Infinity;
      for (let s = 0; s <= t; s++) {
        if (t - s >= c.w) continue;
        lo = Math.min(lo, s);
        jLo = Math.min(jLo, Math.floor(s / c.lSel));
        jHi = Math.max(jHi, Math.floor(s / c.lSel));
      }
      got.push(t, windowSpan(t, c), windowBlocks(t, c));
      want.push(t, { lo, hi: t }, [jLo, jHi]);
      // Frontier: the last position of any compressed block k with k·d + l − 1 ≤ t (the spec's
      // causality rule, enumerated), −1 when there is none.
      let f = -1;
      for (let k = 0; k * c.d + c.l - 1 <= t; k++) f = Math.max(f, k * c.d + c.l - 1);
      const n = visibleCmpBlocks(t, c);
      got.push(cmpFrontier(t, c), n === 0, n > 0 && f <= t && f > t - c.d);
      want.push(f, f === -1, n > 0);
    }
    expect(got).toEqual(want);
  });
});

describe('cell kinds and tooltip facts on reference selections', () => {
  it.each([0, 7, 9].map((i) => [CASES[i].name, i] as const))('%s', (_n, i) => {
    const { c, shape } = CASES[i];
    const [s] = refSnapshots(shape, c, 40 + i).snaps;
    const nb = Math.floor((shape.T - 1) / c.lSel) + 1;
    const counts = { future: 0, candidate: 0, selected: 0, forced: 0, unrecorded: 0 };
    for (let t = 0; t < s.T; t++) {
      const row = s.sel.subarray(t * c.nSel, (t + 1) * c.nSel);
      for (let j = 0; j < nb; j++) {
        const k = cellKind(t, j, row, c);
        counts[k]++;
        const isSel = [...row].includes(j);
        const want = j >= numSelCandidates(t, c) ? 'future' : !isSel ? 'candidate' : forcedBlocks(t, c).includes(j) ? 'forced' : 'selected';
        expect(k, `t=${t} j=${j}`).toBe(want);
        const f = cellFacts(s, t, j);
        expect(f.kind).toBe(k);
        expect(f.score).toBe(s.scores![t * nb + j]);
        expect(f.inWindow).toBe(j >= windowBlocks(t, c)[0] && j <= windowBlocks(t, c)[1]);
        // Covered positions of block j by visible compressed blocks, enumerated.
        let cov = 0;
        for (let p = j * c.lSel; p < (j + 1) * c.lSel; p++) if (p <= cmpFrontier(t, c)) cov++;
        expect(f.cmpCovered).toBe(cov);
      }
      const g = gateMeans(s, t)!;
      const hpg = shape.H / shape.G;
      for (let b = 0; b < 3; b++) {
        let m = 0;
        for (let h = 0; h < hpg; h++) m += s.gates![(t * hpg + h) * 3 + b];
        expect(g[b]).toBeCloseTo(m / hpg, 12);
      }
    }
    expect(counts.selected + counts.forced).toBeGreaterThan(0);
    expect(counts.future).toBeGreaterThan(0);
  });
});

describe('"why (not) this block?" on reference selections', () => {
  it.each([0, 7, 9].map((i) => [CASES[i].name, i] as const))('%s', (_n, i) => {
    const { c, shape } = CASES[i];
    const [s] = refSnapshots(shape, c, 60 + i).snaps;
    const nb = Math.floor((shape.T - 1) / c.lSel) + 1;
    const seen = { future: 0, forced: 0, below: 0, tie: 0, picked: 0, allForced: 0, unpicked: 0 };
    for (let t = 0; t < s.T; t++) {
      const row = [...s.sel.subarray(t * c.nSel, (t + 1) * c.nSel)];
      const forced = forcedBlocks(t, c);
      const byScore = row.filter((b) => b >= 0 && !forced.includes(b));
      const sc = s.scores!.subarray(t * nb, (t + 1) * nb);
      for (let j = 0; j < nb; j++) {
        const text = whyBlock(s, t, j);
        if (j >= numSelCandidates(t, c)) {
          expect(text).toMatch(/^Not yet a candidate/);
          seen.future++;
        } else if (forced.includes(j)) {
          expect(text).toMatch(/^Always read/);
          seen.forced++;
        } else if (row.includes(j)) {
          expect(text).toMatch(new RegExp(`^Selected by score: P = ${sc[j].toFixed(4)}, rank \\d+ of the ${byScore.length}`));
          seen.picked++;
        } else if (byScore.length === 0) {
          expect(text).toMatch(/^Not selected: all n = \d+ slots go to forced blocks/);
          seen.allForced++;
        } else {
          seen.unpicked++;
          // The reference's top-n: an unpicked candidate never beats a block picked by score.
          const lowest = Math.min(...byScore.map((b) => sc[b]));
          expect(sc[j]).toBeLessThanOrEqual(lowest);
          if (sc[j] < lowest) {
            expect(text).toContain(`P = ${sc[j].toFixed(4)} is below ${lowest.toFixed(4)}`);
            seen.below++;
          } else {
            expect(text).toMatch(/ties block \d+/);
            seen.tie++;
          }
        }
      }
    }
    expect(seen.future + seen.forced + seen.picked).toBeGreaterThan(0);
    expect(seen.below + seen.tie).toBe(seen.unpicked);
  });
});

describe('row bins, keys, layout', () => {
  it('row bins partition [0, T) into at most maxRows non-empty bins', () => {
    for (const [T, R] of [
      [64, 480],
      [1024, 480],
      [7, 3],
      [1, 160],
      [0, 100],
      [481, 480],
    ]) {
      const b = rowBins(T, R);
      expect(b.length - 1).toBe(Math.min(T, R));
      expect(b[0]).toBe(0);
      expect(b[b.length - 1]).toBe(T);
      for (let r = 0; r + 1 < b.length; r++) expect(b[r + 1]).toBeGreaterThan(b[r]);
    }
  });

  it('keys step t within [0, T − 1]', () => {
    expect(stepKey('ArrowRight', 5, 64)).toBe(6);
    expect(stepKey('ArrowDown', 63, 64)).toBe(63);
    expect(stepKey('ArrowLeft', 0, 64)).toBe(0);
    expect(stepKey('ArrowUp', 9, 64)).toBe(8);
    expect(stepKey('PageDown', 50, 64)).toBe(63);
    expect(stepKey('PageDown', 10, 64)).toBe(26);
    expect(stepKey('PageUp', 10, 64)).toBe(0);
    expect(stepKey('PageUp', 40, 64)).toBe(24);
    expect(stepKey('Home', 40, 64)).toBe(0);
    expect(stepKey('End', 4, 64)).toBe(63);
    expect(stepKey('a', 4, 64)).toBeNull();
    expect(clampT(99, 0)).toBe(0);
    expect(clampT(Number.NaN, 10)).toBe(0);
  });

  it('hit-testing inverts the row and block geometry', () => {
    for (const [w, T, nb, lSel] of [
      [420, 64, 4, 16],
      [300, 1024, 16, 64],
      [500, 37, 5, 8],
    ]) {
      const L = heatmapLayout(w, T, nb, lSel);
      expect(posX(L, lSel * nb)).toBeCloseTo(L.plotX + L.plotW, 9);
      expect(rowY(L, T)).toBeCloseTo(L.plotY + L.plotH, 9);
      for (let t = 0; t < T; t += 3) {
        for (let j = 0; j < nb; j++) {
          const x = (blockX(L, j) + blockX(L, j + 1)) / 2;
          const y = (rowY(L, t) + rowY(L, t + 1)) / 2;
          expect(hitCell(L, x, y)).toEqual({ t, j });
        }
      }
      expect(hitCell(L, L.plotX - 1, L.plotY + 1)).toBeNull();
      expect(hitCell(L, L.plotX + 1, L.plotY + L.plotH)).toBeNull();
    }
  });

  it('ticks are 1/2/5·10^k apart and at least minGap pixels', () => {
    expect(ticks(64, 384, 20)).toEqual([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60]);
    expect(ticks(1024, 480, 20)).toEqual([
      0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 700, 750, 800, 850, 900, 950, 1000,
    ]);
    expect(ticks(4, 400, 22)).toEqual([0, 1, 2, 3]);
    expect(ticks(0, 100, 20)).toEqual([]);
  });
});
