// Every kernel names its bindings for what they hold: no storage binding, uniform or uniform field
// of any kernel declaration is a numbered slot like s1, i1 or c0 (tests/architecture/binding-names.ts).
// The kernels checked are the registry's compositions, and the registry is checked to hold every
// defineKernel declaration of src/ (each an exported constant of a module of src/kernels/). The
// check itself is tested on a planted declaration, so a broken check cannot pass. CPU only: the
// declarations are plain data (nothing is compiled).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { defineKernel, type Kernel } from '../../src/gpu/kernel-interface';
import { KERNEL_COMPOSITIONS } from '../../src/kernels/registry';
import { slotNamedBindings } from './binding-names';

const SRC = join(process.cwd(), 'src');

const isKernel = (x: unknown): x is Kernel =>
  typeof x === 'object' && x !== null && 'spec' in x && 'header' in x && 'code' in x && 'sourceMap' in x;

/** Every Kernel exported by a module of src/kernels/. */
const MODULES = import.meta.glob('../../src/kernels/*.ts', { eager: true });
const EXPORTED = new Set(Object.values(MODULES).flatMap((m) => Object.values(m as Record<string, unknown>).filter(isKernel)));

describe('binding names', () => {
  it('the registry holds every kernel declaration of src/', () => {
    const calls = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(join(SRC, f), 'utf8').match(/\bdefineKernel\(/g)?.length ?? 0)
      .reduce((a, b) => a + b, 0);
    expect(calls).toBeGreaterThan(20); // the scan found the declarations
    expect(EXPORTED.size, 'exported kernels of src/kernels/ = defineKernel calls in src/').toBe(calls);
    const registered = new Set(KERNEL_COMPOSITIONS.values());
    expect([...EXPORTED].filter((k) => !registered.has(k)).map((k) => k.name)).toEqual([]);
    expect(registered.size).toBe(EXPORTED.size);
  });

  it('no kernel has a storage binding, uniform or uniform field named like a slot (/^[a-z]\\d+$/)', () => {
    const bad = [...KERNEL_COMPOSITIONS.values()].flatMap((k) => slotNamedBindings(k.spec));
    expect(bad).toEqual([]);
  });

  it('the check names the kernel and each slot-named binding of a planted declaration', () => {
    const planted = defineKernel({
      name: 'planted',
      files: [['planted.wgsl', '']],
      uniforms: {
        P: {
          struct: 'Params',
          fields: [
            ['n', 'u32'],
            ['c0', 'f32'],
            ['lSel', 'u32'],
          ],
        },
        u1: { struct: 'More', fields: [['total', 'u32']] },
      },
      entries: {
        forward: [
          ['x', 'array<f32>'],
          ['s1', 'array<f32>'],
          ['kc', 'array<f32>'],
        ],
        topN: [
          ['x', 'array<f32>'],
          ['i1', 'array<i32>'],
          ['dW', 'array<f32>'],
          ['e_', 'array<f32>'],
          ['oCmp', 'array<f32>'],
        ],
      },
    });
    expect(slotNamedBindings(planted.spec)).toEqual([
      'kernel planted: uniform P field c0',
      'kernel planted: uniform u1',
      'kernel planted.forward: storage binding s1',
      'kernel planted.topN: storage binding i1',
    ]);
  });
});
