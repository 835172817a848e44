// Float64 twin of shaders/reduce.wgsl.
export function sumRef(x: ArrayLike<number>, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[i];
  return s;
}
