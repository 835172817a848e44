// Seeded initialisation: each tensor draws from its own stream (seed, name), so adding a tensor
// does not change the others and the same seed always gives the same bits.
import { numel, type ParamSpec } from '../definitions/params';
import { gaussian, mulberry32, subSeed } from '../util/random';

export function initTensor(spec: ParamSpec, seed: number): Float32Array {
  const out = new Float32Array(numel(spec.shape));
  const init = spec.init;
  if (init.kind === 'ones') out.fill(1);
  else if (init.kind === 'identityConv') for (let i = init.taps - 1; i < out.length; i += init.taps) out[i] = 1;
  else if (init.kind === 'normal') {
    const g = gaussian(mulberry32(subSeed(seed, spec.name)));
    for (let i = 0; i < out.length; i++) out[i] = init.std * g();
  }
  return out;
}

export function initParams(specs: readonly ParamSpec[], seed: number): Map<string, Float32Array> {
  return new Map(specs.map((s) => [s.name, initTensor(s, seed)]));
}
