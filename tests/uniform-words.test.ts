// src/gpu/uniforms.ts packWords: the bytes a kernel's uniform words become. An integer outside 32
// bits is refused, never wrapped by the typed array (1e308 would reach a kernel as 0).
import { describe, expect, it } from 'vitest';

import { f32, packWords } from '../src/gpu/uniforms';

describe('packWords', () => {
  it('writes u32, i32 and f32 words at their offsets, padded to 16 bytes', () => {
    const bytes = packWords([0xffffffff, -0x80000000, f32(1.5), 7, 0]);
    expect(bytes.byteLength).toBe(32);
    expect(new Uint32Array(bytes)[0]).toBe(0xffffffff);
    expect(new Int32Array(bytes)[1]).toBe(-0x80000000);
    expect(new Float32Array(bytes)[2]).toBe(1.5);
    expect(new Uint32Array(bytes)[3]).toBe(7);
  });

  it.each([1e308, 2 ** 32, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER])('refuses %d: it does not fit 32 bits', (w) => {
    expect(() => packWords([1, w])).toThrow(`uniform word 1 = ${w} does not fit 32 bits`);
  });

  it('refuses a non-integer word (floats go through f32)', () => {
    expect(() => packWords([0.5])).toThrow('uniform word 0 = 0.5 is not an integer');
  });
});
