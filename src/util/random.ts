// Seeded randomness shared by initialisation, datasets and tests: same seed → same numbers.
// Seeds are integers in [0, 2^53) (train.seed, the CLIs' --seed). The generators keep 32 bits of
// state, so a seed enters them through seedWord: seeds below 2^32 as themselves (every run and
// checkpoint made before keeps its bits), larger ones with their high word mixed in, so N and
// N + k·2^32 never share a stream (they did when seeds were truncated to 32 bits).

/** murmur3's 32-bit finaliser: a bijection of 32-bit words with fmix32(0) = 0. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The 32-bit generator word of a seed: the seed itself below 2^32; above, its low word XOR
 * fmix32(high word). fmix32 is a bijection that maps only 0 to 0, so for a fixed low word every
 * high word gives a different result: seeds N and N + k·2^32 (k ≥ 1) never alias.
 */
export function seedWord(seed: number): number {
  const low = seed >>> 0;
  const high = Math.floor(seed / 4294967296);
  return high === 0 ? low : (low ^ fmix32(high)) >>> 0;
}

/** mulberry32: a small, fast 32-bit PRNG returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let s = seedWord(seed);
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal samples (Box–Muller) from a uniform source. */
export function gaussian(uniform: () => number): () => number {
  return () => {
    const u = Math.max(uniform(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

/** Derives an independent seed for a named stream from a base seed (FNV-1a over the name). */
export function subSeed(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ seedWord(seed)) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
