// Targets the loss does not count: the cross-entropy kernel and its float64 twin give such a
// position loss 0 and a zero gradient row; datasets that score only some positions write it.

/** The target of a position the loss does not count (cross-entropy: loss 0, gradient 0). */
export const IGNORE_TARGET = -1;

/** How many targets the loss counts (every one but IGNORE_TARGET). */
export function scoredTargets(targets: ArrayLike<number>): number {
  let n = 0;
  for (let i = 0; i < targets.length; i++) if (targets[i] !== IGNORE_TARGET) n++;
  return n;
}
