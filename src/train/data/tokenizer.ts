// Tokenizer interface and factory, shared by the Node CLI, tests and the browser worker.
import { createByteTokenizer } from './byte-tokenizer';
import { createGpt2Tokenizer } from './gpt2-tokenizer';

export type TokenizerName = 'byte' | 'gpt2';

export interface Tokenizer {
  readonly name: TokenizerName;
  readonly vocabSize: number;
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
}

/** byte: UTF-8 bytes (vocab 256). gpt2: GPT-2 BPE, r50k_base ranks bundled offline (vocab 50257). */
export function createTokenizer(name: TokenizerName): Tokenizer {
  switch (name) {
    case 'byte':
      return createByteTokenizer();
    case 'gpt2':
      return createGpt2Tokenizer();
    default:
      throw new Error(`unknown tokenizer '${String(name)}' (expected 'byte' or 'gpt2')`);
  }
}
