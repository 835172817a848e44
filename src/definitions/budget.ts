// Matched budget: the sparse mechanisms set to read the same number of key rows per query.
//
// A budget is R key rows read per query (per KV group, the unit every engine counts: dense
// attention reads t + 1) at query position T − 1, the last of a T-token sequence, where every
// mechanism reads the most. Each mechanism gets the largest setting that reads at most R there:
//
//   window  w = R                                          reads min(w, t + 1)
//   moba    topK = floor(R / B), B kept                    reads ≤ topK · B (own block partial)
//   dsa     topK = R                                       reads min(topK, t + 1) (+ the indexer's
//                                                          narrow keys, counted apart)
//   nsa     l, d, l′, φ and forced blocks kept; the rows left after ncmp(T − 1) compressed
//           blocks are split between selection and window in the base config's proportion
//           nSel·l′ : w, nSel = floor(selection share / l′) (at least the forced blocks, and
//           one block more, chosen by content, where a window key is left beside it),
//           w = what is left                              reads ≤ ncmp + nSel·l′ + w
//
// Reads at T − 1 can fall below R only where a block is partial or R does not divide into
// blocks; budgetReads gives the exact figure at T − 1 when every selected block is full. A budget
// a mechanism cannot meet (below one block of MoBA, below NSA's compressed rows plus its forced
// blocks and one window key, above T) is refused naming the field.
import type { ConfigIssue } from './config-issue';
import type { DsaConfig } from './dsa-config';
import type { MobaConfig, WindowConfig } from './mechanisms';
import { visibleCmpBlocks } from './nsa-blocks';
import type { NsaConfig } from './nsa-config';

/** The mechanisms a budget can set (dense attention reads t + 1 whatever the budget). */
export type BudgetMechanism = 'window' | 'moba' | 'dsa' | 'nsa';
export const BUDGET_MECHANISMS: readonly BudgetMechanism[] = ['nsa', 'window', 'moba', 'dsa'];

/** What each mechanism keeps from its own config (block sizes, NSA's compression and split). */
export interface BudgetBase {
  nsa: NsaConfig;
  moba: Pick<MobaConfig, 'blockSize'>;
  dsa: Omit<DsaConfig, 'topK'>;
}

export interface MatchedConfigs {
  window: WindowConfig;
  moba: MobaConfig;
  dsa: DsaConfig;
  nsa: NsaConfig;
}

/** NSA's forced blocks (block 0 if forceInit, and forceLocal local blocks) at a late query: their count. */
const forcedCount = (c: NsaConfig): number => (c.forceInit ? 1 : 0) + c.forceLocal;
/** The fewest blocks NSA may select: its forced blocks, and at least one. */
const minBlocks = (c: NsaConfig): number => Math.max(1, forcedCount(c));

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/**
 * Key rows per query at t = T − 1 of each mechanism's matched config when every selected block is
 * full (the figure the budget bounds): window w; MoBA topK·B; DSA topK; NSA ncmp + nSel·l′ + w.
 */
export function budgetReads(m: BudgetMechanism, c: MatchedConfigs, T: number): number {
  const t = T - 1;
  switch (m) {
    case 'window':
      return Math.min(c.window.w, T);
    case 'moba':
      return Math.min(c.moba.topK * c.moba.blockSize, T);
    case 'dsa':
      return Math.min(c.dsa.topK, T);
    case 'nsa':
      return visibleCmpBlocks(t, c.nsa) + c.nsa.nSel * c.nsa.lSel + c.nsa.w;
  }
}

/**
 * Every mechanism's config reading at most `R` key rows per query at T − 1, or the issues (field
 * `budget`, or `budget.<mechanism>` for one the budget cannot fit) when R cannot be met. `only`:
 * the mechanisms to match (the others are not checked; NSA's config then comes back as given).
 */
export function matchBudget(
  R: number,
  T: number,
  base: BudgetBase,
  only: readonly BudgetMechanism[] = BUDGET_MECHANISMS,
): { configs: MatchedConfigs } | { issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  if (!isInt(T) || T < 2) return { issues: [{ field: 'budget', message: `needs a sequence of at least 2 tokens (seqLen ${String(T)})` }] };
  if (!isInt(R) || R < 1) return { issues: [{ field: 'budget', message: `must be an integer ≥ 1 key rows per query (got ${String(R)})` }] };
  if (R >= T)
    issues.push({
      field: 'budget',
      message: `${R} key rows per query is all ${T} positions a query at T − 1 can read: that is dense attention, not a budget`,
    });
  const B = base.moba.blockSize;
  if (only.includes('moba') && R < B)
    issues.push({
      field: 'budget.moba',
      message: `${R} key rows are fewer than one MoBA block of ${B} (model.moba.blockSize): MoBA reads at least its own block`,
    });
  const nsa = base.nsa;
  const ncmp = visibleCmpBlocks(T - 1, nsa);
  const floor = ncmp + minBlocks(nsa) * nsa.lSel + 1;
  if (only.includes('nsa') && R < floor)
    issues.push({
      field: 'budget.nsa',
      message: `${R} key rows are fewer than NSA's ${ncmp} compressed blocks at T = ${T} plus ${minBlocks(nsa)} selected block(s) of ${nsa.lSel} (its forced blocks, at least one) and one window key (${floor})`,
    });
  if (issues.length) return { issues };

  const rest = R - ncmp;
  const share = (nsa.nSel * nsa.lSel) / (nsa.nSel * nsa.lSel + nsa.w);
  const maxBlocks = Math.ceil(T / nsa.lSel);
  let nSel = Math.min(maxBlocks, Math.max(minBlocks(nsa), Math.floor((rest * share) / nsa.lSel)));
  if (rest - nSel * nsa.lSel < 1) nSel = Math.max(minBlocks(nsa), Math.floor((rest - 1) / nsa.lSel));
  // Forced blocks alone are not NSA's selection: one block chosen by content, where the rows allow
  // it with a window key left (at T = 64, R = 40, l′ = 8 and two forced blocks: nSel 3, w 1, not 2 and 9).
  if (nSel <= forcedCount(nsa) && nSel < maxBlocks && rest - (nSel + 1) * nsa.lSel >= 1) nSel++;
  const w = Math.min(T, rest - nSel * nsa.lSel);
  return {
    configs: {
      window: { w: R },
      moba: { blockSize: B, topK: Math.min(Math.floor(R / B), Math.ceil(T / B)) },
      dsa: { ...base.dsa, topK: R },
      // Not asked for: the base config as it is.
      nsa: only.includes('nsa') ? { ...nsa, nSel, w } : nsa,
    },
  };
}
