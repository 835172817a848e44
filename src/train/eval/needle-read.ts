// Routing of a task's answers (docs/models-and-tasks.md, "Needle selected"), pure and browser-safe:
// for each scored answer the position it is copied from — its source, the earliest s < t with
// x[s − 1] = x[t] and x[s] = y[t] (recall: the pair's value; passkey: the needle's digit) — and
// whether a layer's selection read it: NSA and MoBA when the block ⌊s / block⌋ is among the query's
// selected blocks, DSA when s is among its selected tokens, in any KV group. A model can only get an
// answer its selection never read through the compressed branch (NSA) or not at all (MoBA, DSA), so
// accuracy split by this shows whether a sparse model fails at routing or at reading.
// The GPU scorer (scoreRecall) reads each layer's selection; python/nsa_playground/needle.py is the
// PyTorch engine's twin.
import { IGNORE_TARGET } from '../../definitions/targets';

/** [B·T]: each scored answer's source position, −1 where the target is not scored or has no earlier bigram (x[t], y[t]). */
export function answerSources(tokens: ArrayLike<number>, targets: ArrayLike<number>, B: number, T: number): Int32Array {
  if (tokens.length !== B * T || targets.length !== B * T)
    throw new Error(`answerSources: ${tokens.length} tokens and ${targets.length} targets, expected B·T = ${B * T}`);
  const src = new Int32Array(B * T).fill(-1);
  for (let r = 0; r < B; r++) {
    const o = r * T;
    for (let t = 0; t < T; t++) {
      const y = targets[o + t];
      if (y === IGNORE_TARGET) continue;
      const x = tokens[o + t];
      for (let s = 1; s < t; s++)
        if (tokens[o + s - 1] === x && tokens[o + s] === y) {
          src[o + t] = s;
          break;
        }
    }
  }
  return src;
}

export interface NeedleScore {
  /** Answers with a source. */
  answers: number;
  /** Per layer: the fraction of those answers whose source the layer's selection read (null: no answer has a source). */
  selectedByLayer: (number | null)[];
  /** … that some layer's selection read. */
  selectedAny: number | null;
  /** Accuracy among the answers some layer read the source of (null: none). */
  accuracySelected: number | null;
  /** Accuracy among the answers no layer read the source of (null: none). */
  accuracyMissed: number | null;
}

/** Running sums over held-out batches; `score` turns them into a NeedleScore. */
export class NeedleTally {
  private answers = 0;
  private readonly byLayer: number[];
  private selected = 0;
  private selectedRight = 0;
  private missedRight = 0;

  constructor(readonly layers: number) {
    this.byLayer = new Array<number>(layers).fill(0);
  }

  /**
   * One batch: `selections[l]` holds layer l's selection, B·T rows of G·K units (blocks of `block`
   * positions; DSA: tokens, block 1), −1 padded; `sources` from answerSources; `right[r·T + t]` 1
   * where that answer was right.
   */
  add(selections: readonly Int32Array[], perRow: number, sources: Int32Array, block: number, right: Uint8Array): void {
    if (selections.length !== this.layers) throw new Error(`NeedleTally: ${selections.length} layers' selections, expected ${this.layers}`);
    const N = sources.length;
    for (const sel of selections)
      if (sel.length !== N * perRow) throw new Error(`NeedleTally: a selection of ${sel.length} entries, expected ${N}·${perRow}`);
    if (right.length !== N) throw new Error(`NeedleTally: ${right.length} right marks, expected ${N}`);
    for (let n = 0; n < N; n++) {
      const s = sources[n];
      if (s < 0) continue;
      const unit = Math.floor(s / block);
      let any = false;
      selections.forEach((sel, l) => {
        if (sel.subarray(n * perRow, (n + 1) * perRow).includes(unit)) {
          this.byLayer[l]++;
          any = true;
        }
      });
      this.answers++;
      if (any) {
        this.selected++;
        this.selectedRight += right[n];
      } else this.missedRight += right[n];
    }
  }

  score(): NeedleScore {
    const frac = (a: number, b: number) => (b > 0 ? a / b : null);
    const n = this.answers;
    return {
      answers: n,
      selectedByLayer: this.byLayer.map((k) => frac(k, n)),
      selectedAny: frac(this.selected, n),
      accuracySelected: frac(this.selectedRight, this.selected),
      accuracyMissed: frac(this.missedRight, n - this.selected),
    };
  }
}
