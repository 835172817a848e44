// Random edits of a run config for the URL-hash and file round-trip tests.
import type { RunConfig } from '../../src/train/config';
import { ALL_FIELDS, type FieldSpec } from '../../src/ui/config/fields';
import { getPath, setPath } from '../../src/ui/config/paths';

type Rand = () => number;

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** A value of the field's type: often valid, sometimes not (the tests keep either kind). */
export function randomValue(spec: FieldSpec, current: unknown, r: Rand): unknown {
  switch (spec.kind.type) {
    case 'int': {
      const cur = typeof current === 'number' ? current : 1;
      return pick(r, [cur + 1, Math.max(cur - 1, 0), cur * 2, Math.floor(r() * 64), Math.max(1, Math.round(cur / 2))]);
    }
    case 'number': {
      const cur = typeof current === 'number' && current !== 0 ? current : 0.5;
      // Non-round values: the round trip must keep every bit.
      return cur * (0.5 + r());
    }
    case 'select':
      return pick(r, spec.kind.options).value;
    case 'checkbox':
      return r() < 0.5;
    case 'gates':
      return pick(r, [
        { kind: 'none' },
        { kind: 'force', branch: pick(r, ['cmp', 'sel', 'win']) },
        { kind: 'freeze', value: r() },
        { kind: 'freeze', value: [r(), r(), r()] },
      ]);
  }
}

/** `base` with 1–5 random fields changed. */
export function randomEdit(base: RunConfig, r: Rand): RunConfig {
  let c = structuredClone(base);
  const n = 1 + Math.floor(r() * 5);
  for (let i = 0; i < n; i++) {
    const spec = pick(r, ALL_FIELDS);
    c = setPath(c, spec.path, randomValue(spec, getPath(c, spec.path), r));
  }
  return c;
}
