// config.json of an exported directory: every model field under its Hugging Face Llama name (plus
// v_head_dim, attention and the NSA block), the tokenizer, the run's train and data settings and the
// trainer state. Both ways: from a run config, and back with every problem named by its field.
import type { ModelConfig, ModelNsaConfig } from '../../definitions/model-config';
import { cmpMlpHidden } from '../../definitions/nsa-config';
import type { TrainerState } from '../checkpoint/checkpoint';
import { type RunConfig, validateRunConfig } from '../config';

export const EXPORT_FORMAT = 'nsa-playground-export';
export const EXPORT_VERSION = 1;
export const CONFIG_FILE = 'config.json';
export const MODEL_FILE = 'model.safetensors';
export const OPTIMIZER_FILE = 'optimizer.safetensors';

/** Model fields and their config.json names (Hugging Face Llama's where it has one). */
const MODEL_KEYS = [
  ['vocabSize', 'vocab_size'],
  ['dim', 'hidden_size'],
  ['nLayers', 'num_hidden_layers'],
  ['nHeads', 'num_attention_heads'],
  ['nKvGroups', 'num_key_value_heads'],
  ['dk', 'head_dim'],
  ['dv', 'v_head_dim'],
  ['ffnHidden', 'intermediate_size'],
  ['seqLen', 'max_position_embeddings'],
  ['ropeTheta', 'rope_theta'],
  ['normEps', 'rms_norm_eps'],
  ['attention', 'attention'],
  ['initStd', 'initializer_range'],
] as const satisfies ReadonlyArray<readonly [keyof ModelConfig, string]>;

const NSA_KEYS = ['l', 'd', 'lSel', 'nSel', 'w', 'phi', 'forceInit', 'forceLocal', 'sharedKV', 'gates'] as const satisfies ReadonlyArray<
  keyof ModelNsaConfig
>;

/** The tokenizer a text source was encoded with; null for synthetic sources (token ids as they are). */
export function tokenizerOf(config: RunConfig): string | null {
  return config.data.source === 'brown' || config.data.source === 'upload' ? config.data.tokenizer : null;
}

/** The config.json object for a run config at trainer state `state`. */
export function exportConfigJson(config: RunConfig, state: TrainerState): Record<string, unknown> {
  const m = config.model;
  const out: Record<string, unknown> = {
    format: EXPORT_FORMAT,
    format_version: EXPORT_VERSION,
    architectures: ['NsaLlamaForCausalLM'],
    model_type: 'nsa_llama',
  };
  for (const [ours, hf] of MODEL_KEYS) out[hf] = m[ours];
  out.tie_word_embeddings = true;
  out.hidden_act = 'silu';
  out.nsa = m.nsa ? { ...m.nsa, cmpMlpHidden: { k: cmpMlpHidden(m.dk), v: cmpMlpHidden(m.dv) } } : null;
  out.tokenizer = tokenizerOf(config);
  out.train = config.train;
  out.data = config.data;
  out.state = { step: state.stepsDone, batches_drawn: state.batchesDrawn };
  return out;
}

type Fail = (field: string, detail: string) => never;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The run config and trainer state a config.json object states; `fail` names the field at fault. */
export function parseExportConfigJson(raw: unknown, fail: Fail): { config: RunConfig; state: TrainerState } {
  if (!isObject(raw)) return fail('(root)', 'is not a JSON object');
  if (raw.format !== EXPORT_FORMAT) fail('format', `is ${JSON.stringify(raw.format)}, not '${EXPORT_FORMAT}'`);
  if (raw.format_version !== EXPORT_VERSION)
    fail('format_version', `is ${JSON.stringify(raw.format_version)}; this build reads version ${EXPORT_VERSION}`);
  const model: Record<string, unknown> = {};
  for (const [ours, hf] of MODEL_KEYS) {
    if (!(hf in raw)) fail(hf, 'is missing');
    model[ours] = raw[hf];
  }
  if (isObject(raw.nsa)) {
    const nsa: Record<string, unknown> = {};
    for (const k of NSA_KEYS) {
      if (!(k in raw.nsa)) fail(`nsa.${k}`, 'is missing');
      nsa[k] = raw.nsa[k];
    }
    model.nsa = nsa;
  } else if (raw.nsa !== null && raw.nsa !== undefined) fail('nsa', 'must be an object or null');
  for (const k of ['train', 'data', 'state'] as const) if (!isObject(raw[k])) fail(k, 'is missing or not an object');
  const config = { model, train: raw.train, data: raw.data } as unknown as RunConfig;
  let issues;
  try {
    issues = validateRunConfig(config);
  } catch (e) {
    return fail('(root)', `cannot be validated (${(e as Error).message})`);
  }
  if (issues.length) {
    const hfField = (f: string) => {
      const key = MODEL_KEYS.find(([ours]) => f === `model.${ours}`);
      return key ? key[1] : f.replace(/^model\./, '');
    };
    fail(hfField(issues[0].field), issues.map((i) => `${hfField(i.field)}: ${i.message}`).join('; '));
  }
  const st = raw.state as Record<string, unknown>;
  for (const k of ['step', 'batches_drawn'])
    if (!(typeof st[k] === 'number' && Number.isSafeInteger(st[k]) && st[k] >= 0))
      fail(`state.${k}`, `must be a non-negative integer (got ${JSON.stringify(st[k])})`);
  const state = { stepsDone: st.step as number, batchesDrawn: st.batches_drawn as number };
  if (state.stepsDone > config.train.steps)
    fail('state.step', `is ${state.stepsDone}, beyond train.steps (${config.train.steps}); raise train.steps to continue`);
  return { config, state };
}
