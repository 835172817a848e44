// README.md of an exported directory: a Hugging Face model card (YAML front matter, then what the
// model is, the data it saw, its training so far, its losses, and how to load it with transformers,
// with the PyTorch package and back in the playground).
import { numel, paramSpecs } from '../../definitions/params';
import type { TrainerState } from '../checkpoint/checkpoint';
import { type RunConfig, shortSeqSteps } from '../config';
import type { EvalMetrics, StepMetrics } from '../types';
import { llamaBlockers } from './config-json';
import { specialTokenIds, taskTokenNames } from './tokenizer-files';

export const MODEL_CARD_FILE = 'README.md';

export interface ModelCardSource {
  config: RunConfig;
  state: TrainerState;
  metrics?: readonly StepMetrics[];
  evals?: readonly EvalMetrics[];
}

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : String(x));

function dataLine(c: RunConfig): string {
  const d = c.data;
  if (d.source === 'brown') return `the Brown corpus, ${d.tokenizer === 'gpt2' ? 'GPT-2 BPE tokens' : 'UTF-8 bytes'}`;
  if (d.source === 'upload') return `an uploaded text, ${d.tokenizer === 'gpt2' ? 'GPT-2 BPE tokens' : 'UTF-8 bytes'}`;
  if (d.source === 'recall') return `the associative-recall task ${JSON.stringify(d.recall)} (token ids, no text)`;
  if (d.source === 'passkey') return `the passkey task ${JSON.stringify(d.passkey)} (token ids, no text)`;
  return `the synthetic '${d.source}' source (token ids, no text)`;
}

function tokenizerLine(c: RunConfig): string {
  const d = c.data;
  if (d.source === 'brown' || d.source === 'upload')
    return d.tokenizer === 'gpt2'
      ? "GPT-2's BPE (r50k_base, vocabulary 50257); `<|endoftext|>` (50256) is bos and eos, and in text it is encoded as plain text, as in the playground"
      : 'one token per UTF-8 byte (id = the byte); no special tokens, so `generate()` stops at `max_new_tokens`';
  return "a word-level vocabulary of the task's token names (split on spaces: recall `f0 k3 v1`, passkey `f2 needle d4 query`, others `t17`); no special tokens";
}

/** The model card's text. */
export function modelCard(src: ModelCardSource): string {
  const { config: c, state } = src;
  const m = c.model;
  const llama = llamaBlockers(m).length === 0;
  const params = paramSpecs(m).reduce((a, s) => a + numel(s.shape), 0);
  const text = c.data.source === 'brown' || c.data.source === 'upload';
  const ids = specialTokenIds(c);
  const metrics = src.metrics ?? [];
  const evals = src.evals ?? [];
  const last = metrics.at(-1);
  const lastEval = evals.at(-1);
  const attention =
    m.attention === 'nsa' && m.nsa
      ? `Native Sparse Attention (compression l=${m.nsa.l}, stride d=${m.nsa.d}, selection blocks of ${m.nsa.lSel}, ${m.nsa.nSel} selected, window ${m.nsa.w}, φ=${m.nsa.phi}${m.nsa.sharedKV ? ', shared K/V' : ''})`
      : m.attention === 'window' && m.window
        ? `sliding-window attention alone (window ${m.window.w})`
        : m.attention === 'moba' && m.moba
          ? `MoBA block attention (blocks of ${m.moba.blockSize}, ${m.moba.topK} per query, own block included)`
          : m.attention === 'dsa' && m.dsa
            ? `DeepSeek Sparse Attention (a lightning indexer of ${m.dsa.indexHeads} heads of ${m.dsa.indexDim} picks ${m.dsa.topK} tokens per query; ${m.dsa.warmupSteps} dense warm-up steps)`
            : 'dense causal attention';
  const remote = llama ? '' : ', trust_remote_code=True';
  const lines = [
    '---',
    'library_name: transformers',
    `tags: [nsa-playground, ${llama ? 'llama' : 'native-sparse-attention'}]`,
    ...(text ? ['pipeline_tag: text-generation'] : []),
    '---',
    '',
    `# nsa-playground model (${m.attention}, step ${state.stepsDone})`,
    '',
    `A ${params.toLocaleString('en-US')}-parameter Llama-style causal language model trained in nsa-playground (WebGPU): ` +
      `${m.nLayers} layers, hidden size ${m.dim}, ${m.nHeads} heads in ${m.nKvGroups} key/value groups, head size ${m.dk}` +
      `${m.dv !== m.dk ? ` (values ${m.dv})` : ''}, SwiGLU ${m.ffnHidden}, RoPE θ=${m.ropeTheta}, ${attention}, ` +
      `context ${m.seqLen}, tied embeddings, float32 weights.`,
    '',
    llama
      ? 'It is exactly a Hugging Face Llama (`LlamaForCausalLM`): transformers runs it with its own code.'
      : `Hugging Face's Llama cannot run it (${llamaBlockers(m).join('; ')}): config.json's \`auto_map\` points at the code in this directory ` +
        "(`modeling_nsa_playground.py` and `configuration_nsa_playground.py`, wrapping the nsa_playground package's own `model.py`, `nsa.py` and `config.py`), " +
        'so loading it needs `trust_remote_code=True`. It has no key/value cache: `generate()` runs the whole sequence for every token.',
    '',
    '## Data and tokenizer',
    '',
    `Trained on ${dataLine(c)}. Tokenizer: ${tokenizerLine(c)}. bos/eos/pad ids: ${ids.bos}/${ids.eos}/${ids.pad}.`,
    '',
    '## Training',
    '',
    `${state.stepsDone} of ${c.train.steps} optimizer steps (${state.batchesDrawn} batches drawn), ` +
      `${c.train.batchSize} × ${c.train.gradAccum} sequences of ${m.seqLen} tokens per step, AdamW (β=${c.train.beta1}/${c.train.beta2}, ` +
      `weight decay ${c.train.weightDecay}), learning rate ${c.train.lrMax} → ${c.train.lrMin} after ${c.train.warmupSteps} warm-up steps, seed ${c.train.seed}.` +
      (shortSeqSteps(c.train)
        ? ` The first ${c.train.shortSeqSteps} steps trained on sequences of ${c.train.shortSeqLen} tokens` +
          (c.train.shortSeqPairs && c.data.recall ? ` holding ${c.train.shortSeqPairs} pairs` : '') +
          ' (a sequence-length warm-up).'
        : ''),
    '',
    last
      ? `Training loss at step ${last.step}: ${fmt(last.loss)} (first logged: ${fmt(metrics[0].loss)} at step ${metrics[0].step}).`
      : 'No training losses were recorded with this export.',
    lastEval
      ? `Validation loss at step ${lastEval.step}: ${fmt(lastEval.valLoss)}${lastEval.accuracy !== undefined ? `, accuracy ${fmt(lastEval.accuracy)}` : ''}.`
      : 'No validation loss was recorded.',
    '',
    "config.json keeps the run's `train` and `data` settings and `state` (steps done, batches drawn); " +
      "`optimizer.safetensors` holds AdamW's moments, so training continues exactly where it stopped.",
    '',
    '## Load it',
    '',
    '```python',
    'from transformers import AutoModelForCausalLM, AutoTokenizer',
    `model = AutoModelForCausalLM.from_pretrained("path/to/this/dir"${remote})`,
    `tok = AutoTokenizer.from_pretrained("path/to/this/dir"${remote})`,
    ...(text
      ? [
          'ids = tok("The jury said", return_tensors="pt").input_ids',
          'print(tok.decode(model.generate(ids, max_new_tokens=40, do_sample=True, top_k=40)[0]))',
        ]
      : [`logits = model(tok("${taskTokenNames(c).slice(0, 3).join(' ')}", return_tensors="pt").input_ids).logits`]),
    '```',
    '',
    'With the nsa-playground PyTorch package (`pip install ./python` from the repository; torch only):',
    '',
    '```python',
    'from nsa_playground import NsaLlamaForCausalLM',
    'model = NsaLlamaForCausalLM.from_pretrained("path/to/this/dir")   # also NSA selections: model(tokens, keep=True)',
    '```',
    '',
    'Train it further on a cluster with `python -m torch.distributed.run --nproc_per_node=8 -m nsa_playground.train --from path/to/this/dir ...`, ' +
      'and back in the playground with `npm run train -- --from-export path/to/this/dir`.',
    '',
  ];
  return lines.join('\n');
}
