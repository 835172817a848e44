// Shared fixtures for the NSA reference tests: edge-case configs, random inputs. (Finite
// differences: tests/helpers/finite-diff.ts.)
import type { NsaConfig, NsaShape } from '../../src/definitions/nsa-config';
import type { CmpMlpPair, CmpMlpWeights } from '../../src/reference/nsa/compression';
import { NsaDecodeRef, type NsaDecodeStep } from '../../src/reference/nsa/decode';
import type { NsaInputs } from '../../src/reference/nsa/layer';
import { randn, rng } from '../helpers/compare';

export const BASE: NsaConfig = { l: 4, d: 2, lSel: 8, nSel: 3, w: 6, phi: 'avg', forceInit: true, forceLocal: 1 };

export interface Case {
  name: string;
  c: NsaConfig;
  shape: NsaShape;
}

const sh = (T: number, H = 4, G = 2, dk = 4, dv = 3): NsaShape => ({ T, H, G, dk, dv });

/** The spec's edge cases; T is rarely a multiple of d or lSel, and dk ≠ dv unless said. */
export const CASES: Case[] = [
  { name: 'base T=37', c: BASE, shape: sh(37) },
  { name: 'T < l', c: BASE, shape: sh(3) },
  { name: 'T = 1', c: BASE, shape: sh(1) },
  { name: 'one group', c: BASE, shape: sh(21, 3, 1) },
  { name: 'one head per group', c: BASE, shape: sh(19, 2, 2) },
  { name: 'w = 1', c: { ...BASE, w: 1 }, shape: sh(23) },
  { name: 'w ≥ T', c: { ...BASE, w: 40 }, shape: sh(29) },
  { name: 'nSel ≥ blocks', c: { ...BASE, nSel: 6, forceLocal: 2 }, shape: sh(33) },
  { name: 'nSel = forceInit + forceLocal', c: { ...BASE, nSel: 3, forceLocal: 2 }, shape: sh(41) },
  { name: 'forceInit false, no forced blocks', c: { ...BASE, nSel: 2, forceInit: false, forceLocal: 0 }, shape: sh(35) },
  { name: 'l = d = lSel', c: { ...BASE, l: 4, d: 4, lSel: 4 }, shape: sh(26) },
  { name: 'd = 1, l = 3, lSel = 6', c: { ...BASE, l: 3, d: 1, lSel: 6 }, shape: sh(23) },
  { name: 'l = d = 1, lSel = 2', c: { ...BASE, l: 1, d: 1, lSel: 2, nSel: 2 }, shape: sh(11) },
  { name: 'dk = dv', c: BASE, shape: sh(18, 4, 2, 4, 4) },
  { name: 'phi = mlp', c: { ...BASE, phi: 'mlp' }, shape: sh(30) },
  { name: 'phi = mlp, T < l', c: { ...BASE, phi: 'mlp' }, shape: sh(2) },
];

export const MLP_HIDDEN = 5;

export interface TestInputs extends NsaInputs {
  q: Float64Array;
  kCmp: Float64Array;
  vCmp: Float64Array;
  kSel: Float64Array;
  vSel: Float64Array;
  kWin: Float64Array;
  vWin: Float64Array;
  gates: Float64Array;
}

export function randomMlp(D: number, Dh: number, l: number, r: () => number): CmpMlpWeights {
  return {
    dIn: D,
    dHidden: Dh,
    pos: randn(l * D, r, 0.5),
    w1: randn(l * D * Dh, r, 1 / Math.sqrt(l * D)),
    b1: randn(Dh, r, 0.3),
    w2: randn(Dh * D, r, 1 / Math.sqrt(Dh)),
    b2: randn(D, r, 0.3),
  };
}

/** Gaussian q/k/v, gates uniform in (0, 1); MLP weights when φ = mlp. */
export function randomInputs(shape: NsaShape, c: NsaConfig, seed: number): TestInputs {
  const { T, H, G, dk, dv } = shape;
  const r = rng(seed);
  const gates = new Float64Array(T * H * 3);
  for (let x = 0; x < gates.length; x++) gates[x] = 0.05 + 0.9 * r();
  const inp: TestInputs = {
    q: randn(T * H * dk, r),
    kCmp: randn(T * G * dk, r),
    vCmp: randn(T * G * dv, r),
    kSel: randn(T * G * dk, r),
    vSel: randn(T * G * dv, r),
    kWin: randn(T * G * dk, r),
    vWin: randn(T * G * dv, r),
    gates,
  };
  if (c.phi === 'mlp') inp.mlp = { k: randomMlp(dk, MLP_HIDDEN, c.l, r), v: randomMlp(dv, MLP_HIDDEN, c.l, r) } satisfies CmpMlpPair;
  return inp;
}

export function dotAll(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function norm(a: ArrayLike<number>): number {
  return Math.sqrt(dotAll(a, a));
}

/** Rows [0, rows) of a row-major tensor whose rows hold `width` values. */
export function headRows<A extends Float64Array | Int32Array>(a: A, rows: number, width: number): A {
  return a.subarray(0, rows * width) as A;
}

/** Bitwise equality (distinguishes −0 from +0 and compares NaN payloads). */
export function sameBits(a: Float64Array | Int32Array, b: Float64Array | Int32Array): boolean {
  if (a.length !== b.length || a.constructor !== b.constructor) return false;
  const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Runs the decode path over all T tokens of `inp`. */
export function decodeAll(inp: TestInputs, shape: NsaShape, c: NsaConfig): NsaDecodeStep[] {
  const { T, H, G, dk, dv } = shape;
  const dec = new NsaDecodeRef({ H, G, dk, dv, capacity: T }, c, inp.mlp);
  const steps: NsaDecodeStep[] = [];
  const row = (a: Float64Array, t: number, n: number) => a.subarray(t * n, (t + 1) * n);
  for (let t = 0; t < T; t++) {
    steps.push(
      dec.step({
        q: row(inp.q, t, H * dk),
        kCmp: row(inp.kCmp, t, G * dk),
        vCmp: row(inp.vCmp, t, G * dv),
        kSel: row(inp.kSel, t, G * dk),
        vSel: row(inp.vSel, t, G * dv),
        kWin: row(inp.kWin, t, G * dk),
        vWin: row(inp.vWin, t, G * dv),
        gates: row(inp.gates, t, H * 3),
      }),
    );
  }
  return steps;
}
