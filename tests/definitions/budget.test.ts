// Matched budget (src/definitions/budget.ts): on random T, budgets and base configs, every matched
// config is valid, reads at most R key rows at the last query (counted position by position from
// a selection of the config's own size, not from the module's formula), and is the largest such
// setting (one more block, key or token would exceed R); budgets no mechanism can meet are
// refused naming the field.
import { describe, expect, it } from 'vitest';

import { BUDGET_MECHANISMS, type BudgetBase, budgetReads, matchBudget } from '../../src/definitions/budget';
import { validateDsaConfig } from '../../src/definitions/dsa-config';
import { validateMobaConfig, validateWindowConfig } from '../../src/definitions/mechanisms';
import { validateNsaConfig } from '../../src/definitions/nsa-config';
import { rng } from '../helpers/compare';

const BASE: BudgetBase = {
  nsa: { l: 32, d: 16, lSel: 64, nSel: 16, w: 512, phi: 'mlp', forceInit: true, forceLocal: 2 },
  moba: { blockSize: 64 },
  dsa: { indexHeads: 4, indexDim: 32, warmupSteps: 100, lossWeight: 1 },
};

/** The most rows a query at t reads from `blocks` selection blocks of `len`: full blocks first, then its own partial one. */
function blockRows(t: number, blocks: number, len: number): number {
  const own = Math.floor(t / len);
  const full = Math.min(blocks, own);
  return full * len + (blocks > own ? t + 1 - own * len : 0);
}

/** NSA at t: compressed blocks that end at or before t, nSel latest blocks, the window. */
function nsaRows(t: number, c: BudgetBase['nsa']): number {
  let ncmp = 0;
  for (let k = 0; k * c.d + c.l - 1 <= t; k++) ncmp++;
  return ncmp + blockRows(t, c.nSel, c.lSel) + Math.min(c.w, t + 1);
}

describe('matchBudget', () => {
  it('m7c-125m at T = 4096, R = 1024: every mechanism reads at most 1024 rows at t = 4095, and exactly as stated', () => {
    const r = matchBudget(1024, 4096, BASE);
    if (!('configs' in r)) throw new Error(JSON.stringify(r.issues));
    const c = r.configs;
    expect(c.window).toEqual({ w: 1024 });
    expect(c.moba).toEqual({ blockSize: 64, topK: 16 });
    expect(c.dsa.topK).toBe(1024);
    // ncmp(4095) = 255; 769 rows left, split 1024 : 512 → 8 blocks of 64 (512 rows) and w = 257.
    expect([c.nsa.nSel, c.nsa.w]).toEqual([8, 257]);
    for (const m of BUDGET_MECHANISMS) expect(budgetReads(m, c, 4096), m).toBe(1024);
  });

  it('NSA keeps a block chosen by content: mqar-tiny at 40 rows (15 compressed, 2 forced blocks of 8) gets nSel 3, w 1', () => {
    const nsa = { l: 8, d: 4, lSel: 8, nSel: 4, w: 8, phi: 'avg' as const, forceInit: true, forceLocal: 1 };
    const r = matchBudget(40, 64, { ...BASE, nsa, moba: { blockSize: 8 } });
    if (!('configs' in r)) throw new Error(JSON.stringify(r.issues));
    // The proportional split (32 : 8 of the 25 rows left) would give the two forced blocks and w = 9.
    expect([r.configs.nsa.nSel, r.configs.nsa.w]).toEqual([3, 1]);
    expect(budgetReads('nsa', r.configs, 64)).toBe(40);
  });

  it('random T, R and bases: valid, within R at the last query, and maximal', () => {
    const rand = rng(7);
    const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
    let checked = 0;
    for (let trial = 0; trial < 400; trial++) {
      const d = int(1, 8);
      const l = d * int(1, 4);
      const lSel = l * int(1, 3);
      const nsa = { l, d, lSel, nSel: int(3, 8), w: int(1, 64), phi: 'avg' as const, forceInit: rand() < 0.5, forceLocal: int(0, 2) };
      const base: BudgetBase = { ...BASE, nsa, moba: { blockSize: int(1, 32) } };
      const T = int(2, 600);
      const R = int(1, T + 5);
      const r = matchBudget(R, T, base);
      if (!('configs' in r)) {
        expect(r.issues.length).toBeGreaterThan(0);
        for (const i of r.issues) expect(i.field).toMatch(/^budget(\.(nsa|moba))?$/);
        continue;
      }
      checked++;
      const c = r.configs;
      const t = T - 1;
      expect(validateWindowConfig(c.window, T)).toEqual([]);
      expect(validateMobaConfig(c.moba, T)).toEqual([]);
      expect(validateDsaConfig(c.dsa, { T })).toEqual([]);
      expect(validateNsaConfig(c.nsa, { T })).toEqual([]);
      const reads = {
        window: Math.min(c.window.w, t + 1),
        moba: blockRows(t, c.moba.topK, c.moba.blockSize),
        dsa: Math.min(c.dsa.topK, t + 1),
        nsa: nsaRows(t, c.nsa),
      };
      for (const [m, n] of Object.entries(reads)) expect(n, `${m} T=${T} R=${R}`).toBeLessThanOrEqual(R);
      // Maximal: one more key, block or token would pass R (or there is nothing more to read).
      expect(c.window.w).toBe(R);
      expect(c.dsa.topK).toBe(R);
      expect((c.moba.topK + 1) * c.moba.blockSize > R || c.moba.topK === Math.ceil(T / c.moba.blockSize)).toBe(true);
      expect(budgetReads('nsa', c, T) === R || c.nsa.w === T).toBe(true);
      // A block chosen by content beside the forced ones, wherever one more block and a window key fit.
      const forced = (nsa.forceInit ? 1 : 0) + nsa.forceLocal;
      const ncmp = nsaRows(t, { ...c.nsa, nSel: 0, w: 0 });
      const room = ncmp + (forced + 1) * lSel + 1 <= R && forced + 1 <= Math.ceil(T / lSel);
      if (room) expect(c.nsa.nSel, `T=${T} R=${R}`).toBeGreaterThan(forced);
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('refuses what no setting can meet, naming the field', () => {
    const fields = (R: number, T: number) => {
      const r = matchBudget(R, T, BASE);
      return 'issues' in r ? r.issues.map((i) => i.field) : [];
    };
    expect(fields(0, 1024)).toEqual(['budget']);
    expect(fields(1.5, 1024)).toEqual(['budget']);
    expect(fields(1024, 1024)).toEqual(['budget']);
    expect(fields(32, 1024)).toEqual(['budget.moba', 'budget.nsa']);
    // ncmp(4095) = 255 + 3 forced blocks of 64 + 1 = 448 rows at least.
    expect(fields(447, 4096)).toEqual(['budget.nsa']);
    expect(fields(448, 4096)).toEqual([]);
    const r = matchBudget(447, 4096, BASE);
    expect('issues' in r && r.issues[0].message).toMatch(/255 compressed blocks at T = 4096 plus 3 selected block\(s\) of 64/);
  });
});
