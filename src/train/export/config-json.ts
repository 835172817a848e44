// config.json of an exported directory: every model field under its Hugging Face Llama name (plus
// v_head_dim, attention and the NSA block), the tokenizer and its special ids, the run's train and
// data settings and the trainer state. Both ways: from a run config, and back with every problem named
// by its field.
//
// Version 2 is a Hugging Face model directory: a model Llama expresses exactly (dense attention,
// v_head_dim = head_dim, no option Llama lacks) is `model_type: llama` / LlamaForCausalLM, which
// transformers loads with no code of ours; any other (NSA, or a field the Llama mapping does not
// know) is `model_type: nsa_playground` with an `auto_map` to the custom code written beside it
// (code-files.ts; AutoModelForCausalLM.from_pretrained(dir, trust_remote_code=True)). Version 1
// (model_type nsa_llama, before Hugging Face loading) is still read.
import type { ModelConfig, ModelNsaConfig } from '../../definitions/model-config';
import { cmpMlpHidden } from '../../definitions/nsa-config';
import type { TrainerState } from '../checkpoint/checkpoint';
import { type RunConfig, validateRunConfig } from '../config';
import { AUTO_MAP, CUSTOM_ARCHITECTURE, CUSTOM_MODEL_TYPE } from './code-files';
import { specialTokenIds } from './tokenizer-files';

export const EXPORT_FORMAT = 'nsa-playground-export';
export const EXPORT_VERSION = 2;
/** The versions this build reads (1: written before exports were Hugging Face directories). */
export const READ_VERSIONS: readonly number[] = [1, 2];
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

/**
 * Optional model options: written when the config sets them, read when present (a config without
 * one means its default: RoPE, no key convolution), so a config comes back exactly as it went.
 */
const OPTIONAL_MODEL_KEYS = [
  ['posEncoding', 'position_encoding'],
  ['shortConv', 'short_conv'],
  // docs/nsa-spec.md section 15: the window and MoBA options, under the same names.
  ['window', 'window'],
  ['moba', 'moba'],
  // docs/dsa-spec.md: the DSA options (indexer, top-k, warm-up, loss weight).
  ['dsa', 'dsa'],
] as const satisfies ReadonlyArray<readonly [keyof ModelConfig, string]>;

const NSA_KEYS = ['l', 'd', 'lSel', 'nSel', 'w', 'phi', 'forceInit', 'forceLocal', 'sharedKV', 'gates'] as const satisfies ReadonlyArray<
  keyof ModelNsaConfig
>;

/** ModelConfig fields Llama has (the NSA settings a dense model may keep are unused by it). */
const LLAMA_FIELDS = new Set<string>([
  'vocabSize',
  'dim',
  'nLayers',
  'nHeads',
  'nKvGroups',
  'dk',
  'dv',
  'ffnHidden',
  'seqLen',
  'ropeTheta',
  'normEps',
  'attention',
  'initStd',
  'nsa',
]);
/** Model options Llama lacks, with the value at which the model is still exactly a Llama. */
const LLAMA_NEUTRAL: Readonly<Record<string, unknown>> = { posEncoding: 'rope', shortConv: 0 };

/**
 * Why Hugging Face's Llama cannot run this model exactly (empty: it can). Any other model field, at
 * any other value, is a reason: a new model option goes to the custom code, never silently dropped.
 */
export function llamaBlockers(m: ModelConfig): string[] {
  const why: string[] = [];
  if (m.attention !== 'dense') why.push(`attention is '${m.attention}' (Llama's is dense)`);
  if (m.dv !== m.dk) why.push(`v_head_dim (${m.dv}) differs from head_dim (${m.dk})`);
  if (m.ffnHidden === 0) why.push('ffnHidden is 0 (attention-only layers; every Llama layer has an MLP)');
  for (const [k, v] of Object.entries(m))
    if (!LLAMA_FIELDS.has(k) && v !== undefined && !(k in LLAMA_NEUTRAL && LLAMA_NEUTRAL[k] === v))
      why.push(`model.${k} is ${JSON.stringify(v)} (Llama has no such option)`);
  return why;
}

/** The tokenizer a text source was encoded with; null for synthetic sources (token ids as they are). */
export function tokenizerOf(config: RunConfig): string | null {
  return config.data.source === 'brown' || config.data.source === 'upload' ? config.data.tokenizer : null;
}

/** The config.json object for a run config at trainer state `state`. */
export function exportConfigJson(config: RunConfig, state: TrainerState): Record<string, unknown> {
  const m = config.model;
  const llama = llamaBlockers(m).length === 0;
  const out: Record<string, unknown> = {
    format: EXPORT_FORMAT,
    format_version: EXPORT_VERSION,
    architectures: [llama ? 'LlamaForCausalLM' : CUSTOM_ARCHITECTURE],
    model_type: llama ? 'llama' : CUSTOM_MODEL_TYPE,
  };
  if (!llama) out.auto_map = AUTO_MAP;
  for (const [ours, hf] of MODEL_KEYS) out[hf] = m[ours];
  for (const [ours, hf] of OPTIONAL_MODEL_KEYS) if (m[ours] !== undefined) out[hf] = m[ours];
  out.tie_word_embeddings = true;
  out.hidden_act = 'silu';
  if (llama) Object.assign(out, { attention_bias: false, attention_dropout: 0, mlp_bias: false, pretraining_tp: 1 });
  const ids = specialTokenIds(config);
  Object.assign(out, { torch_dtype: 'float32', use_cache: llama, bos_token_id: ids.bos, eos_token_id: ids.eos, pad_token_id: ids.pad });
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
  if (!READ_VERSIONS.includes(raw.format_version as number))
    fail('format_version', `is ${JSON.stringify(raw.format_version)}; this build reads versions ${READ_VERSIONS.join(' and ')}`);
  const model: Record<string, unknown> = {};
  for (const [ours, hf] of MODEL_KEYS) {
    if (!(hf in raw)) fail(hf, 'is missing');
    model[ours] = raw[hf];
  }
  for (const [ours, hf] of OPTIONAL_MODEL_KEYS) if (hf in raw) model[ours] = raw[hf];
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
  if (raw.format_version === EXPORT_VERSION) {
    // A Llama config.json is loaded by transformers' own Llama: refuse one that would run a different model.
    const blockers = llamaBlockers(config.model);
    const want = blockers.length ? CUSTOM_MODEL_TYPE : 'llama';
    if (raw.model_type !== want)
      fail(
        'model_type',
        `is ${JSON.stringify(raw.model_type)}, but this model is '${want}'${blockers.length ? ` (${blockers.join('; ')}: Llama cannot run it)` : ''}`,
      );
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
