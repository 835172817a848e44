// Byte-level tokenizer: a token is one UTF-8 byte, so any text round-trips and the vocabulary is 256.
import type { Tokenizer } from './tokenizer';

export function createByteTokenizer(): Tokenizer {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder('utf-8'); // not fatal: a model's sample may cut a character in half
  return {
    name: 'byte',
    vocabSize: 256,
    encode: (text) => Array.from(encoder.encode(text)),
    decode: (ids) => {
      const bytes = new Uint8Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i];
        if (!Number.isInteger(id) || id < 0 || id > 255) throw new Error(`byte tokenizer: id ${id} at ${i} is not a byte`);
        bytes[i] = id;
      }
      return decoder.decode(bytes);
    },
  };
}

/** Encodes straight into a typed array (no number[] in between): used for large corpora. */
export function encodeBytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
