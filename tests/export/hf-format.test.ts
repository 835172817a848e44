// The exported directory as a Hugging Face model (format version 2), in process: a dense model Llama
// runs exactly is model_type llama with no code; NSA, values of another size, no MLP, no RoPE, a key
// convolution or any model field the Llama mapping does not know go to the custom code (auto_map and
// the PyTorch package's own sources, byte for byte); safetensors metadata format pt; special ids;
// the model card; version 1 still imports; a llama config.json for a model Llama cannot run is
// refused. transformers itself loads these directories in hf-transformers.integration.test.ts.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { ModelConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { decodeSafetensors } from '../../src/train/checkpoint/safetensors';
import type { RunConfig } from '../../src/train/config';
import { AUTO_MAP, CODE_FILES } from '../../src/train/export/code-files';
import { llamaBlockers } from '../../src/train/export/config-json';
import { exportDirectoryFiles, type ExportFile, importDirectoryFiles } from '../../src/train/export/directory';
import { tokenizerFiles } from '../../src/train/export/tokenizer-files';
import { preset } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';

const PACKAGE = resolve(__dirname, '../../python/nsa_playground');

function tiny(attention: 'dense' | 'nsa', tokenizer: 'byte' | 'gpt2' = 'byte'): RunConfig {
  const c = preset('tiny');
  c.model.attention = attention;
  c.data = { source: 'brown', tokenizer };
  if (tokenizer === 'gpt2') c.model.vocabSize = 50304;
  return c;
}

function files(c: RunConfig): Map<string, Uint8Array> {
  const params = initParams(paramSpecs(c.model), 1);
  const out = exportDirectoryFiles({ config: c, state: { stepsDone: 4, batchesDrawn: 8 }, params, adamM: params, adamV: params });
  return new Map(out.map((f: ExportFile) => [f.name, f.bytes]));
}

const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);
const json = (b: Uint8Array | undefined) => JSON.parse(text(b)) as Record<string, unknown>;

describe('exported directory as a Hugging Face model', () => {
  it('dense: model_type llama, LlamaForCausalLM, no code, format pt, torch_dtype and null special ids (byte tokenizer)', () => {
    const f = files(tiny('dense'));
    const cfg = json(f.get('config.json'));
    expect([cfg.model_type, cfg.architectures, cfg.format_version, cfg.auto_map]).toEqual(['llama', ['LlamaForCausalLM'], 2, undefined]);
    expect([cfg.torch_dtype, cfg.tie_word_embeddings, cfg.attention_bias, cfg.mlp_bias, cfg.use_cache]).toEqual([
      'float32',
      true,
      false,
      false,
      true,
    ]);
    expect([cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id]).toEqual([null, null, null]);
    expect(Object.keys(CODE_FILES).filter((n) => f.has(n))).toEqual([]);
    for (const name of ['model.safetensors', 'optimizer.safetensors'])
      expect(decodeSafetensors(f.get(name)!, { file: name, maxBytes: 2 ** 30 }).metadata.format, name).toBe('pt');
    expect(text(f.get('README.md'))).toMatch(
      /step 4[\s\S]*LlamaForCausalLM[\s\S]*AutoModelForCausalLM\.from_pretrained\("path\/to\/this\/dir"\)/,
    );
  });

  it('NSA: model_type nsa_playground, auto_map, and the package sources byte for byte', () => {
    const f = files(tiny('nsa'));
    const cfg = json(f.get('config.json'));
    expect([cfg.model_type, cfg.architectures, cfg.auto_map, cfg.use_cache]).toEqual([
      'nsa_playground',
      ['NsaPlaygroundForCausalLM'],
      AUTO_MAP,
      false,
    ]);
    for (const name of Object.keys(CODE_FILES)) expect(text(f.get(name)), name).toBe(readFileSync(join(PACKAGE, name), 'utf8'));
    expect(text(f.get('README.md'))).toMatch(/trust_remote_code=True/);
  });

  it("the custom code is the closure of the wrappers' relative imports (transformers copies exactly those)", () => {
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const m of readFileSync(join(PACKAGE, name), 'utf8').matchAll(/^\s*from\s+\.(\w+)\s+import/gm)) visit(`${m[1]}.py`);
    };
    visit('modeling_nsa_playground.py');
    visit('configuration_nsa_playground.py');
    expect([...seen].sort()).toEqual(Object.keys(CODE_FILES).sort());
  });

  it('Llama only where it runs the model exactly: any other field or value goes to the custom code', () => {
    const m = tiny('dense').model;
    const with_ = (extra: Record<string, unknown>) => ({ ...m, ...extra }) as unknown as ModelConfig;
    expect(llamaBlockers(m)).toEqual([]);
    expect(llamaBlockers(with_({ posEncoding: 'rope', shortConv: 0 }))).toEqual([]);
    expect(llamaBlockers(with_({ dv: m.dk * 2 }))).toEqual([`v_head_dim (${m.dk * 2}) differs from head_dim (${m.dk})`]);
    expect(llamaBlockers(with_({ ffnHidden: 0 }))).toHaveLength(1);
    expect(llamaBlockers(with_({ posEncoding: 'none' }))).toEqual(['model.posEncoding is "none" (Llama has no such option)']);
    expect(llamaBlockers(with_({ shortConv: 4 }))).toEqual(['model.shortConv is 4 (Llama has no such option)']);
    expect(llamaBlockers(with_({ slidingWindow: 64 }))).toEqual(['model.slidingWindow is 64 (Llama has no such option)']);
    expect(llamaBlockers(tiny('nsa').model)).toEqual(["attention is 'nsa' (Llama's is dense)"]);
  });

  it('GPT-2: 50257 tokens, 50000 merges, <|endoftext|> bos/eos, split_special_tokens; task vocabularies by name', () => {
    const c = tiny('dense', 'gpt2');
    const t = tokenizerFiles(c);
    const model = (t['tokenizer.json'] as { model: { vocab: Record<string, number>; merges: string[][] } }).model;
    expect(Object.keys(model.vocab)).toHaveLength(50256);
    expect(model.merges).toHaveLength(50000);
    expect(model.merges[0]).toEqual(['Ġ', 't']); // rank 256 is " t"
    expect(t['tokenizer_config.json']).toMatchObject({
      eos_token: '<|endoftext|>',
      split_special_tokens: true,
      model_max_length: c.model.seqLen,
    });
    const cfg = json(files(c).get('config.json'));
    expect([cfg.bos_token_id, cfg.eos_token_id, cfg.pad_token_id]).toEqual([50256, 50256, null]);
    const recall = recallPreset();
    const vocab = (tokenizerFiles(recall)['tokenizer.json'] as { model: { vocab: Record<string, number> } }).model.vocab;
    expect(Object.keys(vocab)).toHaveLength(recall.model.vocabSize);
    expect([vocab.f0, vocab.k0, vocab.v0]).toEqual([
      0,
      recall.data.recall!.fillers,
      recall.data.recall!.fillers + recall.data.recall!.keys,
    ]);
  });

  it('reads version 1 (before Hugging Face loading); refuses a llama config.json for a model Llama cannot run', () => {
    const f = files(tiny('nsa'));
    const cfg = json(f.get('config.json'));
    const read = (c: Record<string, unknown>) =>
      importDirectoryFiles({
        dir: 'x',
        config: new TextEncoder().encode(JSON.stringify(c)),
        model: f.get('model.safetensors')!,
        optimizer: f.get('optimizer.safetensors')!,
      });
    const v1: Record<string, unknown> = { ...cfg, format_version: 1, architectures: ['NsaLlamaForCausalLM'], model_type: 'nsa_llama' };
    for (const k of ['auto_map', 'torch_dtype', 'use_cache', 'bos_token_id', 'eos_token_id', 'pad_token_id']) delete v1[k];
    expect(read(v1).config).toEqual(read(cfg).config);
    expect(() => read({ ...cfg, model_type: 'llama' })).toThrow(
      /x\/config\.json: model_type: is "llama", but this model is 'nsa_playground'/,
    );
    expect(() => read({ ...cfg, format_version: 3 })).toThrow(/format_version: is 3; this build reads versions 1 and 2/);
  });
});
