// "How it works" for the attention mechanisms besides NSA (docs/nsa-spec.md section 15: the sliding
// window alone and MoBA; docs/dsa-spec.md: DSA), one query t at a time, every number drawn from
// the config: what the query scores, what it reads and why, and how many keys that is against
// dense attention (src/definitions/keys-read.ts counts them). Pure: the panel renders the strings.
import { keysReadAt } from '../../definitions/keys-read';
import { mobaBlocks } from '../../definitions/mechanisms';
import type { ModelConfig } from '../../definitions/model-config';

export interface MechanismExplanation {
  attention: 'window' | 'moba' | 'dsa';
  /** "How MoBA works". */
  title: string;
  /** The paper the mechanism is from (none for the window). */
  paper: { label: string; url: string } | null;
  /** One sentence on the mechanism as a whole. */
  intro: string;
  /** The steps a query goes through, in order. */
  steps: string[];
  /** What query t reads: keys against dense's t + 1. */
  reads: string;
}

export const MOBA_URL = 'https://arxiv.org/abs/2502.13189';
export const DSA_URL = 'https://github.com/deepseek-ai/DeepSeek-V3.2-Exp';

const int = (n: number) => n.toLocaleString('en-US');
const plural = (n: number, one: string, many = `${one}s`) => `${int(n)} ${n === 1 ? one : many}`;

/**
 * The explanation of a window, MoBA or DSA model's attention for query t (0 ≤ t < seqLen), or null
 * for dense and NSA models and for a mechanism whose options are missing.
 */
export function mechanismExplanation(
  m: Pick<ModelConfig, 'attention' | 'seqLen' | 'window' | 'moba' | 'dsa'>,
  t: number,
): MechanismExplanation | null {
  const T = m.seqLen;
  const keys = keysReadAt(t, m);
  if (keys === null) return null;
  const dense = `where dense attention reads t + 1 = ${int(t + 1)}`;
  if (m.attention === 'window' && m.window) {
    const w = m.window.w;
    const lo = Math.max(0, t - w + 1);
    return {
      attention: 'window',
      title: 'How the sliding window works',
      paper: null,
      intro: `Each query reads only the last w = ${int(w)} keys, itself included: nothing older, whatever it holds.`,
      steps: [
        `Query t = ${int(t)} reads positions max(0, t − w + 1) … t = ${int(lo)} … ${int(t)}: no scores and no choice, the range is fixed.`,
        `A token w = ${int(w)} or more positions back is out of one layer's reach; stacked layers pass it on by at most w − 1 = ${int(w - 1)} positions each.`,
      ],
      reads: `Query t reads the last w = ${int(w)} keys: min(w, t + 1) = ${int(keys)} keys, ${dense}.`,
    };
  }
  if (m.attention === 'moba' && m.moba) {
    const { blockSize: B, topK: k } = m.moba;
    const bt = Math.floor(t / B);
    const complete = bt; // the candidates: blocks 0 … bt − 1, all complete
    const others = Math.min(k - 1, complete);
    return {
      attention: 'moba',
      title: 'How MoBA works',
      paper: { label: 'Lu et al., 2025, arXiv 2502.13189', url: MOBA_URL },
      intro: `Mixture of Block Attention cuts the ${int(T)} keys into ${plural(mobaBlocks(T, m.moba), 'block')} of B = ${int(B)} and lets each query read k = ${int(k)} whole blocks, its own included.`,
      steps: [
        `Query t = ${int(t)} lies in block ⌊t / B⌋ = ${int(bt)}, which it always reads, causally cut to positions ${int(bt * B)} … ${int(t)} (${plural(t - bt * B + 1, 'key')}).`,
        `It scores the ${plural(complete, 'complete earlier block')} of B by q·mean(K) (softmax over the blocks, summed over the heads of its K/V group) and reads its own block plus the top k − 1 = ${int(k - 1)}${complete <= k - 1 ? ` — ${complete === 0 ? 'there is none yet' : `all ${int(complete)} fit`}, so nothing is left out` : ''}; equal scores go to the earlier block.`,
        `Reading ${plural(others, 'earlier block')} of ${int(B)} keys and its own: at most k·B = ${int(k * B)} keys per query however long the sequence, plus one mean key per complete block to score them.`,
      ],
      reads: `Query t reads ${int(t - bt * B + 1)} + ${int(others)}·${int(B)} = ${int(keys)} keys (at most k·B = ${int(k * B)}), ${dense}.`,
    };
  }
  if (m.attention === 'dsa' && m.dsa) {
    const { indexHeads: H, indexDim: d, topK: k, warmupSteps: W, lossWeight: lambda } = m.dsa;
    return {
      attention: 'dsa',
      title: 'How DSA works',
      paper: { label: 'DeepSeek-AI, 2025, DeepSeek-V3.2-Exp', url: DSA_URL },
      intro: `DeepSeek Sparse Attention lets a small lightning indexer pick, for each query, the k = ${int(k)} earlier tokens the main attention reads.`,
      steps: [
        `A lightning indexer of H_I = ${int(H)} heads × d_I = ${int(d)} scores every earlier token: I[t, s] = Σ_j w_tj · ReLU(q_tj · k_s), one narrow key k_s per token shared by its heads — for query t = ${int(t)} that is ${plural(t + 1, 'indexer key')}.`,
        `The top k = ${int(k)} tokens by score are read (${t + 1 <= k ? `query t has only ${plural(t + 1, 'candidate')}, so it reads all of them` : `${int(t + 1 - k)} of its ${int(t + 1)} candidates are left out`}); equal scores go to the earlier token, and no token is forced, not even t itself.`,
        `The first W = ${plural(W, 'step')} are a dense warm-up in which only the indexer learns (the main model is frozen): it learns to match the main attention's distribution, a KL loss of weight λ = ${lambda} that never reaches the main model. Then the sparse phase trains both.`,
      ],
      reads: `Query t reads min(k, t + 1) = ${int(keys)} keys (in the warm-up all ${int(t + 1)}), ${dense}; its indexer scores ${plural(t + 1, 'narrow key')} of width ${int(d)}.`,
    };
  }
  return null;
}
