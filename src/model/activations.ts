// Activation arena layout for one model plan. Forward activations are kept per layer (the
// backward needs them); gradient temporaries are shared by all layers (the backward walks the
// layers one at a time). Token inputs get one slot per micro-batch so a whole optimizer step,
// gradient accumulation included, is one submit.
import type { ArenaEntry } from '../gpu/arena';
import { tokenIndexLength } from '../kernels/embedding-index';
import { NSA_STATS_MAX_DISTANCE, nsaStatsLength } from '../kernels/nsa-stats';
import { numSelBlocks } from '../spec/nsa-blocks';
import { nsaCoreSavedEntries, nsaCoreScratchEntries } from './nsa/core';
import type { AttentionShape } from '../spec/shapes';
import type { ModelConfig } from '../spec/model-config';

export interface PlanShape {
  B: number;
  T: number;
  N: number;
  gradAccum: number;
  /** Targets per sequence the loss counts (the others are IGNORE_TARGET); T when all count. */
  scoredPerSequence: number;
}

export const act = {
  tokens: (m: number) => `tokens.${m}`,
  targets: (m: number) => `targets.${m}`,
  tokenIndex: (m: number) => `tokidx.${m}`,
  x: (l: number) => `x.${l}`,
  layer: (l: number, what: string) => `l${l}.${what}`,
};

/** Activation names of each layer's K/V projections: one pair, or one per NSA branch. */
export function kvNames(c: ModelConfig): Array<[string, string]> {
  return c.attention === 'nsa' && c.nsa && !c.nsa.sharedKV
    ? [['k_cmp', 'v_cmp'], ['k_sel', 'v_sel'], ['k_win', 'v_win']]
    : [['k', 'v']];
}

export function nsaShape(c: ModelConfig, s: PlanShape): AttentionShape {
  return { B: s.B, T: s.T, H: c.nHeads, G: c.nKvGroups, dk: c.dk, dv: c.dv };
}

/** Largest block distance bt − j a selection can have (histogram buckets 0..this). */
export function nsaStatsMaxDistance(c: ModelConfig): number {
  return c.nsa ? Math.min(NSA_STATS_MAX_DISTANCE, Math.max(1, numSelBlocks(c.seqLen, c.nsa) - 1)) : 1;
}

export function activationEntries(c: ModelConfig, s: PlanShape): ArenaEntry[] {
  const { N, B, T } = s;
  const C = c.dim;
  const F = c.ffnHidden;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const f32 = (name: string, n: number): ArenaEntry => ({ name, bytes: 4 * n });
  const nsa = c.attention === 'nsa' ? c.nsa : undefined;
  const e: ArenaEntry[] = [];
  for (let m = 0; m < s.gradAccum; m++) {
    e.push(f32(act.tokens(m), N), f32(act.targets(m), N), f32(act.tokenIndex(m), tokenIndexLength(N)));
  }
  for (let l = 0; l <= c.nLayers; l++) e.push(f32(act.x(l), N * C));
  for (let l = 0; l < c.nLayers; l++) {
    const L = (w: string) => act.layer(l, w);
    e.push(
      f32(L('attn_normed'), N * C),
      f32(L('attn_rstd'), N),
      f32(L('q'), N * H * c.dk),
      ...kvNames(c).flatMap(([k, v]) => [f32(L(k), N * G * c.dk), f32(L(v), N * G * c.dv)]),
      f32(L('attn'), N * H * c.dv),
      f32(L('x_mid'), N * C),
      f32(L('mlp_normed'), N * C),
      f32(L('mlp_rstd'), N),
      f32(L('a'), N * F),
      f32(L('b'), N * F),
      f32(L('h'), N * F),
    );
    if (nsa) {
      e.push(f32(L('gates'), N * 3 * H), f32(L('nsa_stats'), nsaStatsLength(nsaStatsMaxDistance(c))));
      e.push(...nsaCoreSavedEntries(L('nsa.'), nsaShape(c, s), nsa));
    } else e.push(f32(L('lse'), B * H * T));
  }
  e.push(
    f32('final_normed', N * C),
    f32('final_rstd', N),
    f32('logits', N * c.vocabSize),
    f32('losses', N),
    f32('proj', N * C),
    // Gradient temporaries, shared across layers.
    f32('dx', N * C),
    f32('dnormed', N * C),
    f32('dh', N * F),
    f32('da', N * F),
    f32('db', N * F),
    f32('dattn', N * H * c.dv),
    f32('dq', N * H * c.dk),
    f32('dk', N * G * c.dk),
    f32('dv', N * G * c.dv),
    f32('delta', B * H * T),
    ...(nsa
      ? [
          f32('gate_logits', N * 3 * H),
          f32('dgate_logits', N * 3 * H),
          f32('dk_sel', N * G * c.dk),
          f32('dv_sel', N * G * c.dv),
          f32('dk_win', N * G * c.dk),
          f32('dv_win', N * G * c.dv),
          ...nsaCoreScratchEntries('nsa.', nsaShape(c, s), nsa),
        ]
      : []),
    // Scalars read back (one step late).
    f32('loss_acc', 1),
    f32('grad_stats', 2),
    f32('val_loss', 1),
  );
  return e;
}
