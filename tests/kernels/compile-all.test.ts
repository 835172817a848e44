// Compiles every kernel composition the wrappers can build (src/kernels/registry.ts: each entry
// point of each composition, with representative override constants) on the test adapter, by
// name; checks that the registry's shader texts are the files under shaders/, that every file is
// used, and that no .wgsl file declares a binding (the headers are generated from the TS
// declarations in src/gpu/kernel-interface.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { KERNEL_COMPOSITIONS, KERNEL_VARIANTS, variantName } from '../../src/kernels/registry';
import { getGpu } from '../helpers/gpu';

const SHADERS = join(__dirname, '../../shaders');

describe('kernel registry', () => {
  it('names each composition once and lists every entry point of each', () => {
    const names = new Set<string>();
    for (const k of KERNEL_COMPOSITIONS.values()) {
      expect(names.has(k.name), k.name).toBe(false);
      names.add(k.name);
      const covered = new Set(KERNEL_VARIANTS.filter((v) => v.kernel === k).map((v) => v.entryPoint));
      expect([...covered].sort(), `entry points of ${k.name}`).toEqual(Object.keys(k.spec.entries).sort());
    }
  });

  it('composes the files under shaders/, uses each of them, and no .wgsl file declares a binding or uniform', () => {
    const onDisk = readdirSync(SHADERS).filter((f) => f.endsWith('.wgsl'));
    const used = new Set<string>();
    for (const k of KERNEL_COMPOSITIONS.values()) {
      for (const [path, code] of k.spec.files) {
        expect(code, `${k.name}: ${path}`).toBe(readFileSync(join(SHADERS, path), 'utf8'));
        used.add(path);
      }
    }
    expect(onDisk.filter((f) => !used.has(f))).toEqual([]);
    for (const f of onDisk) {
      const text = readFileSync(join(SHADERS, f), 'utf8');
      expect(/@binding\s*\(|var\s*<\s*(uniform|storage)/.test(text), `${f} declares a binding`).toBe(false);
    }
  });
});

describe('every kernel composition compiles', () => {
  it.each(KERNEL_VARIANTS.map((v) => [variantName(v), v] as const))('%s', async (name, v) => {
    const gpu = await getGpu();
    const result = await gpu
      .pipeline({ code: v.kernel.code, entryPoint: v.entryPoint, constants: v.constants, label: name, sourceMap: v.kernel.sourceMap })
      .then(
        () => 'ok',
        (e: unknown) => `${name}: ${e instanceof Error ? e.message : String(e)}`,
      );
    expect(result).toBe('ok');
  });
});
