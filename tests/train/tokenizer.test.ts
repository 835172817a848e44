import { describe, expect, it } from 'vitest';

import { createTokenizer } from '../../src/train/data/tokenizer';

describe('byte tokenizer', () => {
  const tok = createTokenizer('byte');

  it('is UTF-8 bytes with vocab 256', () => {
    expect(tok.name).toBe('byte');
    expect(tok.vocabSize).toBe(256);
    expect(tok.encode('Hi é')).toEqual([72, 105, 32, 0xc3, 0xa9]);
  });

  it('round-trips ASCII and non-ASCII text (accents, CJK, emoji, newlines)', () => {
    for (const text of ['', 'Hello world', 'naïve café — “quotes”\n\tx', '日本語のテキスト', 'emoji 🙂🚀 and \u0000 nul']) {
      const ids = tok.encode(text);
      expect(ids.every((id) => Number.isInteger(id) && id >= 0 && id < 256)).toBe(true);
      expect(tok.decode(ids)).toBe(text);
      expect(tok.decode(Uint8Array.from(ids))).toBe(text);
    }
  });

  it('decodes a cut multi-byte character to U+FFFD instead of throwing, and refuses non-byte ids', () => {
    expect(tok.decode([0xc3])).toBe('\ufffd');
    expect(() => tok.decode([256])).toThrow(/not a byte/);
    expect(() => tok.decode([-1])).toThrow(/not a byte/);
  });
});

describe('gpt2 tokenizer (offline r50k_base)', () => {
  const tok = createTokenizer('gpt2');

  it('has vocab 50257 and gives the known GPT-2 ids for "Hello world"', () => {
    expect(tok.name).toBe('gpt2');
    expect(tok.vocabSize).toBe(50257);
    expect(tok.encode('Hello world')).toEqual([15496, 995]);
    expect(tok.decode([15496, 995])).toBe('Hello world');
    expect(tok.decode(Int32Array.of(15496, 995))).toBe('Hello world');
  });

  it('round-trips mixed text', () => {
    const text = 'The Fulton County Grand Jury said Friday "no evidence".\n\nnaïve 日本 🙂  spaces\ttab';
    const ids = tok.encode(text);
    expect(ids.length).toBeLessThan(text.length);
    expect(ids.every((id) => id >= 0 && id < 50257)).toBe(true);
    expect(tok.decode(ids)).toBe(text);
  });

  it('encodes special-token strings in user text as plain text', () => {
    const ids = tok.encode('a<|endoftext|>b');
    expect(ids).not.toContain(50256);
    expect(tok.decode(ids)).toBe('a<|endoftext|>b');
    expect(() => tok.decode([50257])).toThrow(/out of range/);
  });
});

it('createTokenizer refuses unknown names', () => {
  expect(() => createTokenizer('words' as never)).toThrow(/unknown tokenizer/);
});
