// Facts derived from a config: keys read per query against a brute force over every selection,
// block counts, parameters and tokens per step.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { MAX_SEQ_LEN } from '../../src/definitions/model-config';
import { forcedBlocks, numSelCandidates } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { countParams } from '../../src/definitions/params';
import {
  configFacts,
  CROSSOVER_SCAN_LIMIT,
  keyReads,
  keysCrossover,
  meanKeyReads,
  nsaFacts,
  selectedPositions,
} from '../../src/ui/config/derived';
import { CrossoverNote } from '../../src/ui/config/DerivedFacts';
import { runConfigErrors } from '../../src/ui/config/parse';
import { setPath } from '../../src/ui/config/paths';
import { uiPreset } from '../../src/ui/config/presets';

/** Max over every valid selection (forced blocks + any others, min(n, nb) in all) of positions ≤ t. */
function bruteSelected(t: number, c: NsaConfig): number {
  const nb = numSelCandidates(t, c);
  const k = Math.min(c.nSel, nb);
  const forced = forcedBlocks(t, c);
  const others = [...Array(nb).keys()].filter((j) => !forced.includes(j));
  const size = (j: number) => Math.min((j + 1) * c.lSel, t + 1) - j * c.lSel;
  let best = -1;
  for (let mask = 0; mask < 1 << others.length; mask++) {
    const chosen = others.filter((_, i) => mask & (1 << i));
    if (forced.length + chosen.length !== k) continue;
    best = Math.max(
      best,
      [...forced, ...chosen].reduce((a, j) => a + size(j), 0),
    );
  }
  return best;
}

const base: NsaConfig = { l: 4, d: 2, lSel: 4, nSel: 3, w: 5, phi: 'avg', forceInit: true, forceLocal: 1 };

describe('derived config facts', () => {
  it('selected positions equal the brute-force maximum for every t (exact when forceLocal ≥ 1)', () => {
    for (const lSel of [4, 8]) {
      for (const nSel of [1, 2, 3, 5]) {
        for (const forceInit of [true, false]) {
          for (const forceLocal of [0, 1, 2]) {
            const c = { ...base, lSel, nSel, forceInit, forceLocal };
            if (nSel < Number(forceInit) + forceLocal) continue;
            for (let t = 0; t < 40; t++) expect(selectedPositions(t, c), JSON.stringify({ c, t })).toBe(bruteSelected(t, c));
          }
        }
      }
    }
  });

  it('keys read follow docs/nsa-spec.md property 7 and never exceed cmp + dense + window', () => {
    const c = { ...base };
    expect(keyReads(0, c)).toEqual({ cmp: 0, sel: 1, win: 1, total: 2, dense: 1 });
    // t = 3: first compressed block visible (k·d + l − 1 = 3), block 0 partial = whole prefix.
    expect(keyReads(3, c)).toEqual({ cmp: 1, sel: 4, win: 4, total: 9, dense: 4 });
    // t = 20: ncmp = ⌊(21 − 4)/2⌋ + 1 = 9; blocks 0, 5 forced (5 holds 20..20: 1 position) + one full: 9; window 5.
    expect(keyReads(20, c)).toEqual({ cmp: 9, sel: 9, win: 5, total: 23, dense: 21 });
    const m = meanKeyReads(3, c);
    expect(m.dense).toBe(2);
    expect(m.total).toBeCloseTo((2 + 4 + 6) / 3, 12);
  });

  it("shows the paper's sparsity at 64k tokens with the paper's config", () => {
    const paper: NsaConfig = { l: 32, d: 16, lSel: 64, nSel: 16, w: 512, phi: 'avg', forceInit: true, forceLocal: 2 };
    const f = nsaFacts(65536, paper);
    expect(f.cmpBlocks).toBe((65536 - 32) / 16 + 1);
    expect(f.selBlocks).toBe(1024);
    expect(f.selectedLast).toBe(16);
    expect(f.last).toEqual({ cmp: 4095, sel: 1024, win: 512, total: 5631, dense: 65536 });
    expect(f.selExact).toBe(true);
  });

  it('params, tokens per step and NSA facts of a preset; nulls for a bad config', () => {
    const c = uiPreset('recall');
    const facts = configFacts(c, runConfigErrors(c));
    expect(facts.params).toBe(countParams(c.model));
    expect(facts.tokensPerStep).toBe(c.train.batchSize * c.train.gradAccum * c.model.seqLen);
    expect(facts.trainTokens).toBe(facts.tokensPerStep! * c.train.steps);
    expect(facts.nsa?.selBlocks).toBe(8);
    expect(facts.nsa?.cmpBlocks).toBe(15);

    const dense = uiPreset('tiny');
    dense.model.attention = 'dense';
    expect(configFacts(dense, []).nsa).toBeNull();

    const bad = setPath(uiPreset('tiny'), 'model.nKvGroups', 3);
    const badFacts = configFacts(bad, runConfigErrors(bad));
    expect(badFacts.params).toBeNull();
    expect(badFacts.tokensPerStep).toBe(8 * 64);
    const noBatch = setPath(uiPreset('tiny'), 'train.batchSize', NaN);
    expect(configFacts(noBatch, runConfigErrors(noBatch)).tokensPerStep).toBeNull();
  });
});

describe('keysCrossover: where NSA starts to read fewer keys than dense', () => {
  /** Brute force: the shortest T from which every longer T up to `upTo` has fewer reads (last query, or mean over t). */
  function brute(c: NsaConfig, upTo: number): { last: number; mean: number } {
    let last = 1;
    let mean = 1;
    let sum = 0;
    for (let T = 1; T <= upTo; T++) {
      const r = keyReads(T - 1, c).total;
      sum += r - T;
      if (r >= T) last = T + 1;
      if (sum >= 0) mean = T + 1;
    }
    return { last, mean };
  }

  it('matches a brute force scan for the tiny, small and paper settings', () => {
    for (const name of ['tiny', 'small', 'm7c-125m'] as const) {
      const c = uiPreset(name).model.nsa!;
      const x = keysCrossover(c);
      expect(x.last, name).not.toBeNull();
      expect(x.mean, name).not.toBeNull();
      expect(x, name).toMatchObject(brute(c, 4 * x.mean! + 4096));
      expect(x.budget, name).toBe(c.nSel * c.lSel + c.w);
    }
  });

  it('tiny at T = 64: the mean reads 118 % of dense (the crossover is beyond 64), the last query already fewer', () => {
    const c = uiPreset('tiny').model.nsa!;
    const x = keysCrossover(c);
    const m = meanKeyReads(64, c);
    expect(m.total / m.dense).toBeCloseTo(1.18, 2);
    expect(x.mean).toBeGreaterThan(64);
    expect(x.last).toBeLessThanOrEqual(64);
    expect(keyReads(x.last! - 1, c).total).toBeLessThan(x.last!);
    expect(keyReads(x.last! - 2, c).total).toBeGreaterThanOrEqual(x.last! - 1);
  });

  it('stride d = 1 never reads fewer (null within the scan)', () => {
    const c: NsaConfig = { ...uiPreset('tiny').model.nsa!, d: 1, l: 1, lSel: 8 };
    expect(keysCrossover(c, 5000)).toMatchObject({ last: null, mean: null });
  });

  it('the scan covers twice the longest trainable T; the page says "no fewer up to" it, not "never"', () => {
    expect(CROSSOVER_SCAN_LIMIT).toBe(2 * MAX_SEQ_LEN);
    // A window longer than the scan: every query reads at least dense's t + 1 keys up to it.
    const cfg = setPath(uiPreset('tiny'), 'model.nsa.w', CROSSOVER_SCAN_LIMIT + 1);
    const facts = configFacts(cfg, runConfigErrors(cfg)).nsa!;
    expect(facts.crossover).toMatchObject({ last: null, mean: null });
    const html = renderToStaticMarkup(createElement(CrossoverNote, { nsa: facts }));
    expect(html).toContain('NSA reads no fewer keys than dense at any T up to 131,072 with these settings');
  });
});
