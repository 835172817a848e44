// The exported directory's integrity (CPU): its safetensors files carry per-tensor digests, files
// without them (another writer: the PyTorch package) still import; NaN/±Infinity in a weight or a
// moment is refused on read and never written, naming file, tensor and first bad index; a mutant
// campaign over model.safetensors and optimizer.safetensors (bit flips, truncations, NaN injected)
// has no mutant silently accepted.
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { CheckpointFormatError, NonFiniteTensorError, type TrainingCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { decodeSafetensors, encodeSafetensors } from '../../src/train/checkpoint/safetensors';
import { type ExportDirectoryBytes, exportDirectoryFiles, importDirectoryFiles } from '../../src/train/export/directory';
import { preset } from '../../src/train/presets/presets';
import { rng } from '../helpers/compare';

const config = (() => {
  const c = preset('tiny');
  c.model.attention = 'nsa';
  return c;
})();
const params = initParams(paramSpecs(config.model), 3);
const adamM = initParams(paramSpecs(config.model), 4);
const adamV = initParams(paramSpecs(config.model), 5);
const state = { stepsDone: 7, batchesDrawn: 14 };

function directory(): ExportDirectoryBytes {
  const [c, m, o] = exportDirectoryFiles({ config, state, params, adamM, adamV });
  return { dir: 'out', config: c.bytes, model: m.bytes, optimizer: o.bytes };
}

/** The same file as another writer makes it: no digests (and, with `edit`, any values, NaN included). */
function foreign(bytes: Uint8Array, edit: (name: string, data: Float32Array) => void = () => {}): Uint8Array {
  const d = decodeSafetensors(bytes, { file: 'x', maxBytes: 2 ** 30 });
  const tensors = [...d.tensors].map(([name, t]) => {
    const data = t.data.slice();
    edit(name, data);
    return { name, shape: t.shape, data, nonFinite: 'allowed' as const };
  });
  return encodeSafetensors(tensors, d.metadata, { digests: false });
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function expectSame(c: TrainingCheckpoint): void {
  expect(c.config).toEqual(config);
  expect(c.state).toEqual(state);
  for (const [g, want] of [
    [c.params, params],
    [c.adamM, adamM],
    [c.adamV, adamV],
  ] as const)
    for (const [k, v] of want) expect(bits(g.get(k)!), k).toEqual(bits(v));
}

function refusal(files: ExportDirectoryBytes): CheckpointFormatError | undefined {
  try {
    importDirectoryFiles(files);
  } catch (e) {
    if (e instanceof CheckpointFormatError) return e;
    throw new Error(`not a CheckpointFormatError: ${String(e)}`);
  }
  return undefined;
}

describe('exported directory integrity', () => {
  it('model.safetensors and optimizer.safetensors carry digests; files without them (the PyTorch package writes none) import the same', () => {
    const good = directory();
    for (const f of [good.model, good.optimizer]) expect(decodeSafetensors(f, { file: 'x', maxBytes: 2 ** 30 }).digested).toBe(true);
    expectSame(importDirectoryFiles(good));
    const plain = { ...good, model: foreign(good.model), optimizer: foreign(good.optimizer) };
    expect(decodeSafetensors(plain.model, { file: 'x', maxBytes: 2 ** 30 }).digested).toBe(false);
    expectSame(importDirectoryFiles(plain));
  });

  it('NaN/±Infinity in a weight or a moment is refused on read, naming file, tensor and index', () => {
    const good = directory();
    const cases = [
      ['model', 'model.safetensors', 'model.layers.0.self_attn.q_proj.weight', NaN, 130],
      ['optimizer', 'optimizer.safetensors', 'exp_avg.model.norm.weight', Infinity, 3],
      ['optimizer', 'optimizer.safetensors', 'exp_avg_sq.model.embed_tokens.weight', -Infinity, 64 * 5 + 1],
    ] as const;
    for (const [key, file, tensor, value, index] of cases) {
      const bad = { ...good, [key]: foreign(good[key], (n, d) => n === tensor && (d[index] = value)) };
      const e = refusal(bad);
      expect(e).toBeInstanceOf(NonFiniteTensorError);
      expect([e!.file, e!.field, (e as NonFiniteTensorError).index]).toEqual([`out/${file}`, tensor, index]);
      expect(e!.message).toContain(`holds ${value} at index ${index}`);
    }
  });

  it('an export of a NaN weight is never written (the encoder names the tensor and index)', () => {
    const bad = new Map(params);
    const w = params.get('l1.w2')!.slice();
    w[10] = NaN;
    bad.set('l1.w2', w);
    expect(() => exportDirectoryFiles({ config, state, params: bad, adamM, adamV })).toThrow(
      /model\.layers\.1\.mlp\.down_proj\.weight: holds NaN at index \d+ .*never written/,
    );
  });

  it('mutant campaign: 120 mutants of model.safetensors and optimizer.safetensors, none silently accepted', () => {
    const good = directory();
    const r = rng(99);
    const pick = (k: number) => Math.floor(r() * k);
    const silent: string[] = [];
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      const key = i % 2 ? 'model' : 'optimizer';
      const b = good[key].slice();
      let mutated: Uint8Array = b;
      if (i % 3 === 0) mutated = b.slice(0, pick(b.length));
      else if (i % 3 === 1) b[pick(b.length)] ^= 1 << pick(8);
      else {
        const n = new DataView(b.buffer).getUint32(0, true);
        const at = 8 + n + 4 * pick((b.length - 8 - n) / 4);
        new DataView(b.buffer).setFloat32(at, [NaN, Infinity, -Infinity][i % 3], true);
      }
      const e = refusal({ ...good, [key]: mutated });
      if (!e) {
        silent.push(`mutant ${i} of ${key}.safetensors accepted`);
        continue;
      }
      if (!(e.file === `out/${key}.safetensors` && e.field && e.message.startsWith(`${e.file}: ${e.field}: `)))
        silent.push(`mutant ${i}: badly named refusal ${e.message}`);
      refused++;
    }
    console.log(`export mutant campaign: 120 mutants, ${refused} refused naming file and field, ${silent.length} silently accepted`);
    expect(silent).toEqual([]);
    expect(refused).toBe(120);
  });
});
