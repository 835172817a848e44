import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import { InvalidConfigError } from '../../src/definitions/config-issue';
import {
  forcedBlocks,
  numCmpBlocks,
  numSelBlocks,
  numSelCandidates,
  overlapFraction,
  overlappedSelBlocks,
  visibleCmpBlocks,
} from '../../src/definitions/nsa-blocks';
import {
  assertNsaConfig,
  MAX_NSA,
  type NsaConfig,
  type NsaShape,
  PAPER_NSA_CONFIG,
  validateNsaConfig,
} from '../../src/definitions/nsa-config';
import { selectionRanges } from '../../src/definitions/nsa-ranges';
import { nsaForwardRef } from '../../src/reference/nsa/layer';
import { BASE, randomInputs } from './helpers';

describe('validateNsaConfig', () => {
  it('accepts the paper config and the test base config', () => {
    expect(validateNsaConfig(PAPER_NSA_CONFIG, { T: 1024, H: 64, G: 4, dk: 192, dv: 128 })).toEqual([]);
    expect(validateNsaConfig(BASE, { T: 0, H: 4, G: 2, dk: 4, dv: 3 })).toEqual([]);
    expect(validateNsaConfig({ ...BASE, nSel: 1, forceInit: false, forceLocal: 1 })).toEqual([]);
  });

  const bad: Array<[string, Partial<NsaConfig>, Partial<NsaShape> | undefined, string]> = [
    ['d = 0', { d: 0 }, undefined, 'nsa.d'],
    ['d not an integer', { d: 1.5 }, undefined, 'nsa.d'],
    ['d ∤ l', { l: 6, d: 4, lSel: 8 }, undefined, 'nsa.d'],
    ['d ∤ lSel', { l: 4, d: 4, lSel: 6 }, undefined, 'nsa.d'],
    ['l > lSel', { l: 16, d: 2, lSel: 8 }, undefined, 'nsa.lSel'],
    ['l = 0', { l: 0 }, undefined, 'nsa.l'],
    ['lSel = 0', { lSel: 0 }, undefined, 'nsa.lSel'],
    ['w = 0', { w: 0 }, undefined, 'nsa.w'],
    ['nSel = 0', { nSel: 0, forceInit: false, forceLocal: 0 }, undefined, 'nsa.nSel'],
    ['nSel < forceInit + forceLocal', { nSel: 2, forceInit: true, forceLocal: 2 }, undefined, 'nsa.nSel'],
    ['forceLocal < 0', { forceLocal: -1 }, undefined, 'nsa.forceLocal'],
    ['phi unknown', { phi: 'max' as NsaConfig['phi'] }, undefined, 'nsa.phi'],
    ['forceInit not boolean', { forceInit: 1 as unknown as boolean }, undefined, 'nsa.forceInit'],
    ['H % G ≠ 0', {}, { H: 6, G: 4 }, 'shape.H'],
    ['G = 0', {}, { H: 4, G: 0 }, 'shape.G'],
    ['dk = 0', {}, { dk: 0 }, 'shape.dk'],
    ['dv = 0', {}, { dv: 0 }, 'shape.dv'],
    ['T < 0', {}, { T: -1 }, 'shape.T'],
    // Past the upper bounds (those of the PyTorch package's config.json, checked below): 1e308 would
    // reach a kernel's u32 word as 0, and nSel sizes the [B, T, G, nSel] selection buffer.
    ['w = 1e308', { w: 1e308 }, undefined, 'nsa.w'],
    ['w = 2^20 + 1', { w: 2 ** 20 + 1 }, undefined, 'nsa.w'],
    ['nSel = 4097', { nSel: 4097 }, undefined, 'nsa.nSel'],
    ['lSel = 8192', { lSel: 8192 }, undefined, 'nsa.lSel'],
    ['l = 8192', { l: 8192 }, undefined, 'nsa.l'],
    ['d = 8192', { d: 8192 }, undefined, 'nsa.d'],
    ['forceLocal = 4097', { forceLocal: 4097, nSel: 4096 }, undefined, 'nsa.forceLocal'],
  ];
  it.each(bad)('rejects %s, naming exactly that field', (_name, patch, shape, field) => {
    const issues = validateNsaConfig({ ...BASE, ...patch }, shape);
    expect(issues.map((i) => i.field)).toEqual([field]);
    expect(issues[0].message.length).toBeGreaterThan(0);
    expect(() => assertNsaConfig({ ...BASE, ...patch }, shape)).toThrow(field);
    try {
      assertNsaConfig({ ...BASE, ...patch }, shape);
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidConfigError);
      expect((e as InvalidConfigError).name).toBe('InvalidConfigError');
      expect((e as InvalidConfigError).issues).toEqual(issues);
    }
  });

  it('the upper bounds equal MAX_NSA of the PyTorch package, and each bound itself is accepted', () => {
    const py = readFileSync(resolve(__dirname, '../../python/nsa_playground/config.py'), 'utf8');
    const line = /^MAX_NSA = \{(.*)\}$/m.exec(py);
    expect(line, 'MAX_NSA in python/nsa_playground/config.py').not.toBeNull();
    const pyMax = Object.fromEntries([...line![1].matchAll(/"(\w+)": 1 << (\d+)/g)].map((m) => [m[1], 2 ** Number(m[2])]));
    expect(pyMax).toEqual(MAX_NSA);
    expect(validateNsaConfig({ ...BASE, l: 4096, d: 4096, lSel: 4096, nSel: 4096, w: 2 ** 20, forceLocal: 4095 })).toEqual([]);
  });

  it('the reference refuses an invalid config before any work', () => {
    const shape = { T: 5, H: 4, G: 2, dk: 4, dv: 3 };
    const inp = randomInputs(shape, BASE, 1);
    expect(() => nsaForwardRef(inp, shape, { ...BASE, d: 3 })).toThrow('nsa.d');
    expect(() => nsaForwardRef(inp, { ...shape, G: 3 }, BASE)).toThrow('shape.H');
    expect(() => nsaForwardRef({ ...inp, q: inp.q.subarray(1) }, shape, BASE)).toThrow(/q has/);
  });

  it('an empty sequence (T = 0) gives empty outputs', () => {
    const shape = { T: 0, H: 4, G: 2, dk: 4, dv: 3 };
    const f = nsaForwardRef(randomInputs(shape, BASE, 1), shape, BASE);
    expect([f.o.length, f.selection.length, f.nCmp, f.nBlocks]).toEqual([0, 0, 0, 0]);
  });
});

describe('block arithmetic', () => {
  const configs: NsaConfig[] = [
    BASE,
    { ...BASE, l: 4, d: 4, lSel: 4 },
    { ...BASE, l: 3, d: 1, lSel: 6 },
    { ...BASE, l: 8, d: 4, lSel: 16 },
    { ...BASE, l: 6, d: 3, lSel: 6 },
  ];
  it.each(configs.map((c) => [`l=${c.l} d=${c.d} lSel=${c.lSel}`, c] as const))('matches brute force (%s)', (_n, c) => {
    for (let T = 0; T <= 50; T++) {
      let n = 0;
      for (let k = 0; k * c.d + c.l <= T; k++) n++;
      expect(numCmpBlocks(T, c)).toBe(n);
      expect(numSelBlocks(T, c)).toBe(Math.ceil(T / c.lSel));
    }
    for (let t = 0; t < 50; t++) {
      let n = 0;
      for (let k = 0; k * c.d + c.l - 1 <= t; k++) n++;
      expect(visibleCmpBlocks(t, c)).toBe(n);
      expect(visibleCmpBlocks(t, c)).toBe(numCmpBlocks(t + 1, c));
      let nb = 0;
      for (let j = 0; j * c.lSel <= t; j++) nb++;
      expect(numSelCandidates(t, c)).toBe(nb);
    }
    for (let k = 0; k < 20; k++) {
      let sum = 0;
      const [j0, j1] = overlappedSelBlocks(k, c);
      for (let j = 0; j * c.lSel < k * c.d + c.l + c.lSel; j++) {
        let count = 0;
        for (let s = k * c.d; s < k * c.d + c.l; s++) if (s >= j * c.lSel && s < (j + 1) * c.lSel) count++;
        expect(overlapFraction(k, j, c)).toBe(count / c.l);
        expect(count > 0).toBe(j >= j0 && j <= j1);
        sum += overlapFraction(k, j, c);
      }
      expect(Math.abs(sum - 1)).toBeLessThanOrEqual(1e-15);
    }
  });

  it('forced blocks follow the spec order, deduped and non-negative', () => {
    const c2 = { ...BASE, lSel: 8, forceInit: true, forceLocal: 2 };
    expect(forcedBlocks(0, c2)).toEqual([0]);
    expect(forcedBlocks(9, c2)).toEqual([0, 1]);
    expect(forcedBlocks(17, c2)).toEqual([0, 2, 1]);
    expect(forcedBlocks(40, { ...c2, forceLocal: 3 })).toEqual([0, 5, 4, 3]);
    expect(forcedBlocks(40, { ...c2, forceInit: false, forceLocal: 1 })).toEqual([5]);
    expect(forcedBlocks(40, { ...c2, forceInit: false, forceLocal: 0 })).toEqual([]);
    expect(forcedBlocks(3, { ...c2, forceLocal: 4 })).toEqual([0]);
  });
});

describe('selectionRanges', () => {
  const c = BASE; // lSel = 8
  it('merges adjacent blocks and clamps the last range to t + 1', () => {
    expect(selectionRanges([0, 1, 3, -1], 29, c)).toEqual([
      [0, 16],
      [24, 30],
    ]);
    expect(selectionRanges([0, 2, 3], 40, c)).toEqual([
      [0, 8],
      [16, 32],
    ]);
    expect(selectionRanges([2], 16, c)).toEqual([[16, 17]]);
    expect(selectionRanges([-1, -1], 5, c)).toEqual([]);
  });
  it.each([
    ['a block after padding', [0, -1, 2], 30],
    ['descending blocks', [2, 1], 30],
    ['a repeated block', [1, 1], 30],
    ['a block that is not a candidate (j·lSel > t)', [0, 2], 15],
    ['a value below −1', [-2], 30],
    ['a non-integer block', [0.5], 30],
  ] as const)('throws on %s', (_n, blocks, t) => {
    expect(() => selectionRanges(blocks, t, c)).toThrow(/selectionRanges/);
  });
  it('every range of a real selection satisfies 0 ≤ start < end ≤ t+1', () => {
    const shape = { T: 61, H: 4, G: 2, dk: 4, dv: 3 };
    const f = nsaForwardRef(randomInputs(shape, c, 3), shape, c);
    let n = 0;
    for (let t = 0; t < shape.T; t++) {
      for (let g = 0; g < shape.G; g++) {
        const rs = selectionRanges(f.selection.subarray((t * 2 + g) * c.nSel, (t * 2 + g + 1) * c.nSel), t, c);
        for (const [a, b] of rs) {
          expect(0 <= a && a < b && b <= t + 1).toBe(true);
          n++;
        }
      }
    }
    expect(n).toBeGreaterThan(shape.T * shape.G);
  });
});
