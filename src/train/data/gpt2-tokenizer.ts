// GPT-2 BPE (r50k_base) through gpt-tokenizer: the ranks ship inside the package, nothing is fetched.
import { decode, encode, vocabularySize } from 'gpt-tokenizer/encoding/gpt2';

import type { Tokenizer } from './tokenizer';

/** Special-token strings such as "<|endoftext|>" in user text are encoded as plain text, never refused. */
const PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

export function createGpt2Tokenizer(): Tokenizer {
  if (vocabularySize !== 50257) throw new Error(`gpt2 tokenizer: expected vocab 50257, package reports ${vocabularySize}`);
  return {
    name: 'gpt2',
    vocabSize: vocabularySize,
    encode: (text) => encode(text, PLAIN_TEXT),
    decode: (ids) => {
      const list = Array.from(ids);
      for (let i = 0; i < list.length; i++) {
        const id = list[i];
        if (!Number.isInteger(id) || id < 0 || id >= vocabularySize) throw new Error(`gpt2 tokenizer: id ${id} at ${i} out of range`);
      }
      return decode(list);
    },
  };
}
