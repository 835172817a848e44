// Float64 twin of shaders/gradnorm.wgsl.
export function gradNormRef(ranges: ReadonlyArray<ArrayLike<number>>, maxNorm: number): { norm: number; scale: number } {
  let ss = 0;
  for (const r of ranges) for (let i = 0; i < r.length; i++) ss += r[i] * r[i];
  const norm = Math.sqrt(ss);
  const scale = !Number.isFinite(norm) ? 0 : maxNorm > 0 && norm > maxNorm ? maxNorm / (norm + 1e-6) : 1;
  return { norm, scale };
}
