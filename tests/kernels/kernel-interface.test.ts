// The named kernel interface (src/gpu/kernel-interface.ts): generated WGSL header, uniform words by
// field name, bindings by name, and compile errors located in the composed files.
import { describe, expect, it } from 'vitest';

import { createArena } from '../../src/gpu/arena';
import { ShaderCompileError } from '../../src/gpu/context';
import { defineKernel, kernelBindings, sourceLocation, uniformWords } from '../../src/gpu/kernel-interface';
import { f32 } from '../../src/gpu/uniforms';
import { getGpu } from '../helpers/gpu';

const good = `override WG: u32 = 64;
@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  if (gid.x < P.n) { y[gid.x] = x[gid.x] * P.s; }
}
`;

describe('kernel interface', () => {
  const K = defineKernel({
    name: 'test.scale',
    files: [['scale.wgsl', good]],
    uniforms: {
      P: {
        struct: 'Params',
        fields: [
          ['n', 'u32'],
          ['s', 'f32', 'the factor'],
          ['k', 'i32'],
        ],
      },
    },
    entries: {
      main: [
        ['x', 'array<f32>'],
        ['y', 'array<f32>'],
      ],
      other: [
        ['x', 'array<f32>'],
        ['z', 'array<i32>'],
      ],
    },
  });

  it('generates the uniform struct and one binding line per name', () => {
    expect(K.header).toContain('struct Params {\n  n: u32,\n  s: f32, // the factor\n  k: i32,\n}');
    expect(K.header).toContain('@group(0) @binding(0) var<uniform> P: Params;');
    expect(K.header).toContain('@group(0) @binding(1) var<storage, read_write> x: array<f32>;');
    expect(K.header).toContain('@group(0) @binding(2) var<storage, read_write> y: array<f32>;');
    expect(K.header).toContain('@group(0) @binding(2) var<storage, read_write> z: array<i32>;');
    expect(K.header.match(/ x: /g)).toHaveLength(1);
    expect(K.code.endsWith(good)).toBe(true);
  });

  it('rejects a name bound at two indices or with two types', () => {
    expect(() =>
      defineKernel({
        name: 'bad',
        files: [],
        uniforms: {},
        entries: {
          a: [['x', 'array<f32>']],
          b: [
            ['y', 'array<f32>'],
            ['x', 'array<f32>'],
          ],
        },
      }),
    ).toThrow(/binding x is @binding\(0\) array<f32> in a but @binding\(1\) array<f32> in b/);
    expect(() =>
      defineKernel({ name: 'bad', files: [], uniforms: {}, entries: { a: [['x', 'array<f32>']], b: [['x', 'array<i32>']] } }),
    ).toThrow(/binding x/);
  });

  it('builds uniform words by field name, in declaration order, with the same bits as positional words', () => {
    expect(uniformWords(K.spec.uniforms.P, { n: 3, s: 0.5, k: -2 })).toEqual([3, f32(0.5), -2]);
    // @ts-expect-error a missing field is a type error
    expect(() => uniformWords(K.spec.uniforms.P, { n: 3, s: 0.5 })).toThrow(/missing field k/);
    // @ts-expect-error an extra field is a type error
    expect(() => uniformWords(K.spec.uniforms.P, { n: 3, s: 0.5, k: 1, extra: 1 })).toThrow(/unknown field extra/);
    expect(() => uniformWords(K.spec.uniforms.P, { n: -1, s: 0.5, k: 1 })).toThrow(/n = -1 is outside u32/);
  });

  it('orders the bind group by the declaration, from slices keyed by name', async () => {
    const gpu = await getGpu();
    const arena = createArena(gpu, 'kernel-interface', [
      { name: 'x', bytes: 64 },
      { name: 'y', bytes: 64 },
    ]);
    const x = arena.get('x');
    const y = arena.get('y');
    const b = kernelBindings(gpu, K, 'main', { uniforms: { P: { n: 1, s: 1, k: 0 } }, storage: { y, x } });
    expect(b.slice(1)).toEqual([x, y]);
    // @ts-expect-error a binding of another entry point is a type error
    expect(() => kernelBindings(gpu, K, 'main', { uniforms: { P: { n: 1, s: 1, k: 0 } }, storage: { x, y, z: x } })).toThrow(
      /unknown storage binding\(s\) z/,
    );
    arena.buffers[0].destroy();
  });

  it('maps composed lines to the header and the files', () => {
    const h = K.sourceMap[0];
    expect(h.source).toBe('<generated header of kernel test.scale>');
    expect(sourceLocation(K.sourceMap, 1)).toBe('<generated header of kernel test.scale>:1');
    expect(sourceLocation(K.sourceMap, h.end + 3)).toBe('shaders/scale.wgsl:3');
  });
});

describe('compile errors name the file and line', () => {
  it('reports a syntax error in the second file at its own line', async () => {
    const gpu = await getGpu();
    const broken = '// a broken file\nfn helper() -> f32 {\n  let a = 1.0 +;\n  return a;\n}\n';
    const K = defineKernel({
      name: 'test.broken',
      files: [
        ['scale.wgsl', good],
        ['broken.wgsl', broken],
      ],
      uniforms: {
        P: {
          struct: 'Params',
          fields: [
            ['n', 'u32'],
            ['s', 'f32'],
          ],
        },
      },
      entries: {
        main: [
          ['x', 'array<f32>'],
          ['y', 'array<f32>'],
        ],
      },
    });
    const err = await gpu.pipeline({ code: K.code, entryPoint: 'main', label: 'test.broken', sourceMap: K.sourceMap }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ShaderCompileError);
    const e = err as ShaderCompileError;
    expect(e.message).toMatch(/pipeline test\.broken/);
    expect(e.messages[0]).toMatch(/^shaders\/broken\.wgsl:3:\d+: error: /);
    // The compile error was caught in an error scope: nothing uncaptured reached the device reports.
    expect(gpu.reports).toEqual([]);
  });

  it('reports an error in the generated header as such', async () => {
    const gpu = await getGpu();
    // The file redeclares the uniform struct the header generates.
    const K = defineKernel({
      name: 'test.clash',
      files: [['clash.wgsl', 'struct Params { n: u32 }\n' + good]],
      uniforms: {
        P: {
          struct: 'Params',
          fields: [
            ['n', 'u32'],
            ['s', 'f32'],
          ],
        },
      },
      entries: {
        main: [
          ['x', 'array<f32>'],
          ['y', 'array<f32>'],
        ],
      },
    });
    const err = (await gpu
      .pipeline({ code: K.code, entryPoint: 'main', label: 'test.clash', sourceMap: K.sourceMap })
      .catch((e: unknown) => e)) as ShaderCompileError;
    expect(err).toBeInstanceOf(ShaderCompileError);
    expect(err.messages.join('\n')).toMatch(/(<generated header of kernel test\.clash>|shaders\/clash\.wgsl):\d+:\d+: error: .*Params/);
  });
});
