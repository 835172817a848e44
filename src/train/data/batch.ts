// Batch buffers and token statistics shared by all datasets.

/** B sequences of T tokens, row-major (index b*T + t); targets[i] is the token that follows tokens[i]. */
export interface Batch {
  tokens: Int32Array;
  targets: Int32Array;
}

/** Token storage of a split: the narrowest array that holds the vocabulary. */
export type TokenArray = Uint8Array | Uint16Array | Int32Array;

export function createBatch(batchSize: number, seqLen: number): Batch {
  return { tokens: new Int32Array(batchSize * seqLen), targets: new Int32Array(batchSize * seqLen) };
}

/** Copies the window source[start .. start+T] (T+1 tokens) into row b of the batch, shifted for targets. */
export function writeWindow(out: Batch, b: number, seqLen: number, source: ArrayLike<number>, start: number): void {
  const base = b * seqLen;
  for (let t = 0; t < seqLen; t++) {
    out.tokens[base + t] = source[start + t];
    out.targets[base + t] = source[start + t + 1];
  }
}

export function checkBatchShape(out: Batch, batchSize: number, seqLen: number): void {
  const n = batchSize * seqLen;
  if (out.tokens.length !== n || out.targets.length !== n) {
    throw new Error(`batch arrays hold ${out.tokens.length}/${out.targets.length} tokens, expected B*T = ${n}`);
  }
}

/** Entropy (nats) of the token frequencies: the loss of the best context-free predictor on these tokens. */
export function unigramEntropyOf(tokens: ArrayLike<number>, vocabSize: number): number {
  const counts = new Float64Array(vocabSize);
  for (let i = 0; i < tokens.length; i++) counts[tokens[i]]++;
  const n = tokens.length;
  let h = 0;
  for (let v = 0; v < vocabSize; v++) {
    if (counts[v] > 0) {
      const p = counts[v] / n;
      h -= p * Math.log(p);
    }
  }
  return h;
}
