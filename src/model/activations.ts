// Activation arena layout for one model plan. Forward activations are kept per layer (the
// backward needs them); gradient temporaries are shared by all layers (the backward walks the
// layers one at a time). Token inputs get one slot per micro-batch so a whole optimizer step,
// gradient accumulation included, is one submit.
import type { ArenaEntry } from '../gpu/arena';
import { tokenIndexLength } from '../kernels/embedding-index';
import type { ModelConfig } from './config';

export interface PlanShape {
  B: number;
  T: number;
  N: number;
  gradAccum: number;
}

export const act = {
  tokens: (m: number) => `tokens.${m}`,
  targets: (m: number) => `targets.${m}`,
  tokenIndex: (m: number) => `tokidx.${m}`,
  x: (l: number) => `x.${l}`,
  layer: (l: number, what: string) => `l${l}.${what}`,
};

export function activationEntries(c: ModelConfig, s: PlanShape): ArenaEntry[] {
  const { N, B, T } = s;
  const C = c.dim;
  const F = c.ffnHidden;
  const H = c.nHeads;
  const G = c.nKvGroups;
  const f32 = (name: string, n: number): ArenaEntry => ({ name, bytes: 4 * n });
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
      f32(L('k'), N * G * c.dk),
      f32(L('v'), N * G * c.dv),
      f32(L('attn'), N * H * c.dv),
      f32(L('lse'), B * H * T),
      f32(L('x_mid'), N * C),
      f32(L('mlp_normed'), N * C),
      f32(L('mlp_rstd'), N),
      f32(L('a'), N * F),
      f32(L('b'), N * F),
      f32(L('h'), N * F),
    );
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
    // Scalars read back (one step late).
    f32('loss_acc', 1),
    f32('grad_stats', 2),
    f32('val_loss', 1),
  );
  return e;
}
