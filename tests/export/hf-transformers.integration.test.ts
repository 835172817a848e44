// The exports loaded by Hugging Face's own classes (.venv-hf: transformers, torch 2.x CPU), against the
// WebGPU model: the tiny dense model is a plain LlamaForCausalLM (no trust_remote_code) and the tiny
// NSA and DSA models load their custom code (trust_remote_code=True; DSA past its one warm-up step, so
// the indexer's top-k picks the keys), each after two training steps on Brown
// bytes; on the next batch their logits equal the WebGPU model's (relative RMS of the row-centred
// logits ≤ 1e-5: the GPU gives probabilities, whose logs are the logits up to each row's constant;
// both sides float32), loading raises no warning (a model-type mismatch would), AutoTokenizer encodes
// as the playground's tokenizer does (byte, GPT-2 on a Brown excerpt and edge cases, a task
// vocabulary), and generate() returns text.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { datasetForRun } from '../../src/cli/data-node';
import { paramSpecs } from '../../src/definitions/params';
import { tokenIndexLength } from '../../src/kernels/embedding-index';
import { initParams } from '../../src/model/init';
import { ModelPlan } from '../../src/model/plan';
import { decodeSafetensors } from '../../src/train/checkpoint/safetensors';
import type { RunConfig } from '../../src/train/config';
import { createBatch } from '../../src/train/data/datasets';
import { createTokenizer } from '../../src/train/data/tokenizer';
import { exportDirectoryFiles } from '../../src/train/export/directory';
import { taskTokenNames } from '../../src/train/export/tokenizer-files';
import { learningRate } from '../../src/train/lr-schedule';
import { preset } from '../../src/train/presets/presets';
import { recallPreset } from '../../src/train/presets/recall-preset';
import { relRms } from '../helpers/compare';
import { getGpu } from '../helpers/gpu';
import { hfPython, runTorch, writeFiles } from './torch-side';

const STEPS = 2;
const NEW_TOKENS = 8;
const root = mkdtempSync(join(tmpdir(), 'nsa-hf-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const EDGE_TEXTS = [
  'Hello, world!',
  ' The  jury\n\nsaid   "it\'s" 1234 dollars.',
  'héllo wörld — 日本語 🙂',
  'a<|endoftext|>b',
  "I'll've \t tabs",
  '',
];
const brownExcerpt = () => readFileSync('public/data/brown.txt', 'utf8').slice(0, 6000);

interface HfResult {
  warnings: string[];
  tokenizer_class: string;
  model_class?: string;
  model_type?: string;
  dtype?: string;
  encodings: number[][];
  decodings: string[];
  generated?: { ids: number[]; text: string };
  transformers: string;
  torch: string;
}

/** hf_check.py over every request in one process; each result (and logits, for a model) by name. */
function hfCheck(requests: Array<Record<string, unknown>>): Map<string, { result: HfResult; logits?: Float32Array }> {
  const req = join(root, 'requests.json');
  const out = join(root, 'hf-out');
  writeFileSync(req, JSON.stringify(requests.map((r) => ({ model: false, trust_remote_code: false, texts: [], ...r }))));
  runTorch([join(__dirname, 'hf_check.py'), req, out], { python: hfPython(), timeoutMs: 240_000 });
  return new Map(
    requests.map((r) => {
      const dir = join(out, r.name as string);
      const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as HfResult;
      const logits = r.model
        ? decodeSafetensors(readFileSync(join(dir, 'logits.safetensors')), { file: dir, maxBytes: 2 ** 30 }).tensors.get('logits')!.data
        : undefined;
      return [r.name as string, { result, logits }];
    }),
  );
}

/** Row-centred logits [N, V] (from probabilities: their logs). */
function centred(rows: Float32Array, V: number, fromProbabilities: boolean): Float64Array {
  const out = new Float64Array(rows.length);
  for (let r = 0; r < rows.length / V; r++) {
    let mean = 0;
    for (let v = 0; v < V; v++) mean += out[r * V + v] = fromProbabilities ? Math.log(rows[r * V + v]) : rows[r * V + v];
    mean /= V;
    for (let v = 0; v < V; v++) out[r * V + v] -= mean;
  }
  return out;
}

function tiny(attention: 'dense' | 'nsa' | 'dsa'): RunConfig {
  const c = preset('tiny');
  c.model.attention = attention;
  if (attention === 'dsa') c.model.dsa = { indexHeads: 2, indexDim: 8, topK: 16, warmupSteps: 1, lossWeight: 1 };
  c.data = { source: 'brown', tokenizer: 'byte' };
  c.train = { ...c.train, steps: 10, batchSize: 2, gradAccum: 1, warmupSteps: 2, evalEvery: 0 };
  return c;
}

/** Trains STEPS steps on the GPU, exports into root/<attention>, and reads the next batch's probabilities. */
async function trainedExport(
  attention: 'dense' | 'nsa' | 'dsa',
): Promise<{ config: RunConfig; dir: string; tokens: number[][]; probs: Float32Array }> {
  const config = tiny(attention);
  const gpu = await getGpu();
  const t = config.train;
  const dataset = datasetForRun(config);
  const plan = await ModelPlan.build(gpu, config.model, {
    batchSize: t.batchSize,
    gradAccum: 1,
    optimizer: { beta1: t.beta1, beta2: t.beta2, eps: t.eps, weightDecay: t.weightDecay, gradClip: t.gradClip },
    scoredPerSequence: dataset.scoredPerSequence,
  });
  plan.importParams(initParams(plan.specs, t.seed));
  const batch = createBatch(t.batchSize, config.model.seqLen);
  const index = new Int32Array(tokenIndexLength(plan.shape.N));
  const schedule = {
    lrMax: t.lrMax,
    lrMin: t.lrMin,
    warmupSteps: t.warmupSteps,
    totalSteps: t.steps,
    warmupStartFraction: t.warmupStartFraction,
  };
  for (let s = 0; s < STEPS; s++) {
    dataset.nextTrainBatch(batch);
    plan.writeBatch(0, batch.tokens, batch.targets, index);
    const enc = gpu.device.createCommandEncoder();
    plan.encodeTrainStep(enc, learningRate(schedule, s), s + 1);
    gpu.submit([enc.finish()]);
  }
  const params = await plan.exportParams();
  const { m, v } = await plan.exportOptimizerState();
  const dir = join(root, attention);
  writeFiles(dir, exportDirectoryFiles({ config, state: { stepsDone: STEPS, batchesDrawn: STEPS }, params, adamM: m, adamV: v }));
  dataset.nextTrainBatch(batch);
  plan.writeBatch(0, batch.tokens, batch.targets, index);
  const probs = await plan.readProbabilities();
  plan.destroy();
  const T = config.model.seqLen;
  const tokens = Array.from({ length: t.batchSize }, (_, b) => Array.from(batch.tokens.subarray(b * T, (b + 1) * T)));
  return { config, dir, tokens, probs };
}

/** An export of fresh weights (for its tokenizer files). */
function freshExport(name: string, c: RunConfig): string {
  const params = initParams(paramSpecs(c.model), 1);
  const d = join(root, name);
  writeFiles(d, exportDirectoryFiles({ config: c, state: { stepsDone: 0, batchesDrawn: 0 }, params, adamM: params, adamV: params }));
  return d;
}

const MODELS = [
  ['dense', 'LlamaForCausalLM', false],
  ['nsa', 'NsaPlaygroundForCausalLM', true],
  ['dsa', 'NsaPlaygroundForCausalLM', true],
] as const;
const BYTE_TEXTS = [...EDGE_TEXTS, brownExcerpt().slice(0, 1500)];
const GPT2_TEXTS = [...EDGE_TEXTS, brownExcerpt()];

let sides: Map<string, Awaited<ReturnType<typeof trainedExport>>>;
let hf: ReturnType<typeof hfCheck>;
let recallNames: string[];

beforeAll(async () => {
  sides = new Map();
  for (const [attention] of MODELS) sides.set(attention, await trainedExport(attention));
  const gpt2 = tiny('dense');
  gpt2.data = { source: 'brown', tokenizer: 'gpt2' };
  gpt2.model.vocabSize = 50304;
  gpt2.model.dim = 16;
  const recall = recallPreset();
  recallNames = taskTokenNames(recall);
  hf = hfCheck([
    ...MODELS.map(([attention, , remote]) => ({
      name: attention,
      dir: sides.get(attention)!.dir,
      model: true,
      trust_remote_code: remote,
      tokens: sides.get(attention)!.tokens,
      texts: BYTE_TEXTS,
      prompt: 'The jury said',
      max_new_tokens: NEW_TOKENS,
    })),
    { name: 'gpt2', dir: freshExport('gpt2', gpt2), texts: GPT2_TEXTS },
    { name: 'recall', dir: freshExport('recall', recall), texts: [recallNames.join(' ')], trust_remote_code: true },
  ]);
}, 300_000);

describe('exports loaded by transformers (AutoModelForCausalLM, AutoTokenizer) = the WebGPU model', () => {
  it.each(MODELS)(
    'tiny %s: %s, logits rel RMS ≤ 1e-5, no warning, AutoTokenizer = the byte tokenizer, generate() returns text',
    (attention, modelClass, remote) => {
      const { config, probs } = sides.get(attention)!;
      const { result, logits } = hf.get(attention)!;
      const V = config.model.vocabSize;
      const err = relRms(centred(probs, V, true), centred(logits!, V, false));
      console.log(
        `[hf] tiny ${attention}: ${result.model_class} (${result.model_type}, transformers ${result.transformers}, torch ${result.torch}): ` +
          `logits rel RMS ${err.toExponential(2)}; generate() → ${JSON.stringify(result.generated!.text)}`,
      );
      expect(result.warnings, 'warnings while loading').toEqual([]);
      expect([result.model_class, result.model_type, result.dtype]).toEqual([
        modelClass,
        remote ? 'nsa_playground' : 'llama',
        'torch.float32',
      ]);
      expect(err, 'logits').toBeLessThanOrEqual(1e-5);
      const byte = createTokenizer('byte');
      expect(result.encodings).toEqual(BYTE_TEXTS.map((x) => byte.encode(x)));
      expect(result.decodings).toEqual(BYTE_TEXTS);
      expect(result.generated!.ids).toHaveLength(NEW_TOKENS);
      expect(result.generated!.text).toBe(byte.decode(result.generated!.ids));
    },
  );

  it('AutoTokenizer of a GPT-2 export encodes and decodes as the playground (a Brown excerpt, edge cases); a task vocabulary by its names', () => {
    const gpt2 = hf.get('gpt2')!.result;
    const project = createTokenizer('gpt2');
    expect(gpt2.warnings).toEqual([]);
    expect(gpt2.encodings).toEqual(GPT2_TEXTS.map((x) => project.encode(x)));
    expect(gpt2.decodings).toEqual(GPT2_TEXTS);
    const task = hf.get('recall')!.result;
    expect(task.encodings).toEqual([recallNames.map((_, i) => i)]);
    expect(task.decodings).toEqual([recallNames.join(' ')]);
  });
});
