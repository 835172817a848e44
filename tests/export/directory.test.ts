// The exported directory's files (CPU): Hugging Face Llama-style names in nn.Linear's [out, in]
// orientation, a lossless round trip back to a training checkpoint, and broken files refused
// naming the file and the field or tensor.
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { CheckpointFormatError } from '../../src/train/checkpoint/checkpoint';
import { decodeSafetensors, encodeSafetensors } from '../../src/train/checkpoint/safetensors';
import type { RunConfig } from '../../src/train/config';
import { CODE_FILES } from '../../src/train/export/code-files';
import { exportDirectoryFiles, type ExportFile, importDirectoryFiles } from '../../src/train/export/directory';
import { preset } from '../../src/train/presets/presets';

function nsaConfig(): RunConfig {
  const c = preset('tiny');
  c.model.attention = 'nsa';
  c.model.nsa = { ...c.model.nsa!, phi: 'mlp', gates: { kind: 'freeze', value: [0.2, 0.5, 1] } };
  c.train.steps = 50;
  return c;
}

function files(c: RunConfig, step = 7): ExportFile[] {
  const params = initParams(paramSpecs(c.model), 3);
  const m = initParams(paramSpecs(c.model), 4);
  const v = initParams(paramSpecs(c.model), 5);
  return exportDirectoryFiles({ config: c, state: { stepsDone: step, batchesDrawn: 2 * step }, params, adamM: m, adamV: v });
}

const byName = (fs: ExportFile[]) => ({
  dir: 'out',
  config: fs[0].bytes,
  model: fs[1].bytes,
  optimizer: fs[2].bytes,
});

describe('exported directory', () => {
  it('names tensors as Hugging Face Llama does, with [out, in] projections', () => {
    const c = nsaConfig();
    const fs = files(c);
    expect(fs.map((f) => f.name)).toEqual([
      'config.json',
      'model.safetensors',
      'optimizer.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
      'special_tokens_map.json',
      'README.md',
      ...Object.keys(CODE_FILES),
    ]);
    const model = decodeSafetensors(fs[1].bytes, { file: 'model', maxBytes: 2 ** 30 }).tensors;
    const C = c.model.dim;
    const shape = (n: string) => model.get(n)?.shape;
    expect(shape('model.embed_tokens.weight')).toEqual([c.model.vocabSize, C]);
    expect(shape('model.layers.0.self_attn.q_proj.weight')).toEqual([c.model.nHeads * c.model.dk, C]);
    expect(shape('model.layers.1.self_attn.k_sel_proj.weight')).toEqual([c.model.nKvGroups * c.model.dk, C]);
    expect(shape('model.layers.0.self_attn.o_proj.weight')).toEqual([C, c.model.nHeads * c.model.dv]);
    expect(shape('model.layers.0.self_attn.branch_gate.weight')).toEqual([3 * c.model.nHeads, C]);
    expect(shape('model.layers.0.self_attn.branch_gate.bias')).toEqual([3 * c.model.nHeads]);
    expect(shape('model.layers.0.self_attn.compress_k.fc1.weight')).toEqual([2 * c.model.dk, c.model.nsa!.l * c.model.dk]);
    expect(shape('model.layers.0.self_attn.compress_v.pos_embed')).toEqual([c.model.nsa!.l, c.model.dv]);
    expect(shape('model.layers.1.mlp.down_proj.weight')).toEqual([C, c.model.ffnHidden]);
    expect(shape('model.norm.weight')).toEqual([C]);
    expect(model.size).toBe(paramSpecs(c.model).length);
    // q_proj.weight[o][i] = wq[i][o].
    const wq = initParams(paramSpecs(c.model), 3).get('l0.wq')!;
    const q = model.get('model.layers.0.self_attn.q_proj.weight')!.data;
    const out = c.model.nHeads * c.model.dk;
    expect(q[5 * C + 9]).toBe(wq[9 * out + 5]);
    const cfg = JSON.parse(new TextDecoder().decode(fs[0].bytes)) as Record<string, unknown>;
    expect(cfg).toMatchObject({
      hidden_size: C,
      num_key_value_heads: 2,
      head_dim: 16,
      tokenizer: 'byte',
      state: { step: 7, batches_drawn: 14 },
    });
    expect(cfg.nsa).toMatchObject({ l: 8, d: 4, lSel: 8, nSel: 3, w: 16, phi: 'mlp', cmpMlpHidden: { k: 32, v: 32 } });
  });

  it.each(['dense', 'nsa'] as const)('%s: round trip to the same checkpoint, bit for bit', (attention) => {
    const c = nsaConfig();
    c.model.attention = attention;
    const back = importDirectoryFiles(byName(files(c)));
    expect(back.config).toEqual(c);
    expect(back.state).toEqual({ stepsDone: 7, batchesDrawn: 14 });
    for (const [name, want] of [
      ['params', initParams(paramSpecs(c.model), 3)],
      ['adamM', initParams(paramSpecs(c.model), 4)],
      ['adamV', initParams(paramSpecs(c.model), 5)],
    ] as const)
      for (const [k, v] of want) expect(back[name].get(k), `${name} ${k}`).toEqual(v);
  });

  it('refuses broken files, naming the file and the field or tensor', () => {
    const c = nsaConfig();
    const good = byName(files(c));
    const configWith = (edit: (j: Record<string, unknown>) => void) => {
      const j = JSON.parse(new TextDecoder().decode(good.config)) as Record<string, unknown>;
      edit(j);
      return { ...good, config: new TextEncoder().encode(JSON.stringify(j)) };
    };
    const refused = (f: typeof good, file: string, field: string) => {
      try {
        importDirectoryFiles(f);
      } catch (e) {
        expect(e).toBeInstanceOf(CheckpointFormatError);
        expect((e as CheckpointFormatError).file).toBe(`out/${file}`);
        expect((e as CheckpointFormatError).field).toBe(field);
        return;
      }
      throw new Error(`accepted a broken ${file} (${field})`);
    };
    refused(
      configWith((j) => (j.head_dim = 15)),
      'config.json',
      'head_dim',
    );
    refused(
      configWith((j) => delete j.num_attention_heads),
      'config.json',
      'num_attention_heads',
    );
    refused(
      configWith((j) => ((j.nsa as Record<string, unknown>).lSel = 4)),
      'config.json',
      'nsa.lSel',
    );
    refused(
      configWith((j) => (j.format = 'other')),
      'config.json',
      'format',
    );
    refused(
      configWith((j) => (j.state = { step: 99, batches_drawn: 0 })),
      'config.json',
      'state.step',
    );
    refused({ ...good, config: new TextEncoder().encode('{') }, 'config.json', '(file)');
    const model = decodeSafetensors(good.model, { file: 'm', maxBytes: 2 ** 30 }).tensors;
    const without = [...model].filter(([n]) => n !== 'model.layers.1.mlp.up_proj.weight');
    const rewrite = (list: typeof without) =>
      encodeSafetensors(
        list.map(([name, t]) => ({ name, shape: t.shape, data: t.data })),
        {},
      );
    refused({ ...good, model: rewrite(without) }, 'model.safetensors', 'model.layers.1.mlp.up_proj.weight');
    const transposed = [...model].map(
      ([n, t]) => [n, n.endsWith('gate_proj.weight') ? { ...t, shape: [t.shape[1], t.shape[0]] } : t] as const,
    );
    refused({ ...good, model: rewrite(transposed as typeof without) }, 'model.safetensors', 'model.layers.0.mlp.gate_proj.weight');
    refused({ ...good, optimizer: good.model }, 'optimizer.safetensors', 'exp_avg.model.embed_tokens.weight');
  });
});
