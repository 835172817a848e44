// The run config's editable fields: one descriptor per leaf of RunConfig, grouped in the panel's
// sections. The URL hash, the JSON import and the panel all use this list as the schema.
import type { RunConfig } from '../../train/config';

export interface SelectOption {
  value: string;
  label: string;
}

export type FieldKind =
  | { type: 'int'; min?: number }
  | { type: 'number'; min?: number }
  | { type: 'select'; options: readonly SelectOption[] }
  | { type: 'checkbox' }
  /** The NSA gate ablation: a tagged union edited as one value. */
  | { type: 'gates' };

export interface FieldSpec {
  /** Dotted path into RunConfig, e.g. 'model.nsa.d'; also the `field` of validation errors. */
  path: string;
  label: string;
  kind: FieldKind;
  hint?: string;
  /** An optional setting: what its absence means (older configs lack it); shown when absent. */
  absent?: unknown;
}

export type SectionId = 'model' | 'nsa' | 'window' | 'moba' | 'dsa' | 'train' | 'data';

export interface SectionSpec {
  id: SectionId;
  title: string;
  fields: readonly FieldSpec[];
}

const int = (path: string, label: string, hint?: string, min = 1): FieldSpec => ({ path, label, kind: { type: 'int', min }, hint });
const num = (path: string, label: string, hint?: string, min?: number): FieldSpec => ({ path, label, kind: { type: 'number', min }, hint });
const select = (path: string, label: string, options: readonly SelectOption[], hint?: string): FieldSpec => ({
  path,
  label,
  kind: { type: 'select', options },
  hint,
});

export const SECTIONS: readonly SectionSpec[] = [
  {
    id: 'model',
    title: 'Model',
    fields: [
      select('model.attention', 'Attention', [
        { value: 'dense', label: 'dense (causal softmax)' },
        { value: 'nsa', label: 'NSA (native sparse attention)' },
        { value: 'window', label: 'sliding window alone' },
        { value: 'moba', label: 'MoBA (top-k blocks by mean key)' },
        { value: 'dsa', label: 'DSA (top-k tokens by a lightning indexer)' },
      ]),
      int('model.vocabSize', 'Vocabulary size', 'Token ids the embedding holds (256 for bytes, 50257 for GPT-2).'),
      int('model.dim', 'Model width', 'Residual stream width C.'),
      int('model.nLayers', 'Layers'),
      int('model.nHeads', 'Query heads', 'H'),
      int('model.nKvGroups', 'K/V groups', 'G (GQA); must divide the heads.'),
      int('model.dk', 'Query/key head dim', 'dk; even (RoPE).'),
      int('model.dv', 'Value head dim', 'dv'),
      int('model.ffnHidden', 'FFN hidden width', 'SwiGLU hidden units; 0: attention-only layers.', 0),
      int('model.seqLen', 'Sequence length', 'T tokens per training sequence.'),
      {
        ...select('model.posEncoding', 'Positional encoding', [
          { value: 'rope', label: 'RoPE (rotary)' },
          { value: 'none', label: 'none' },
        ]),
        absent: 'rope',
      },
      num('model.ropeTheta', 'RoPE θ'),
      { ...int('model.shortConv', 'Key convolution taps', '0: none; 4 is what recall models use.', 0), absent: 0 },
      num('model.normEps', 'RMSNorm ε'),
      num('model.initStd', 'Init std', 'Normal init of weight matrices.'),
    ],
  },
  {
    id: 'nsa',
    title: 'Native sparse attention',
    fields: [
      int('model.nsa.l', 'Compression block l', 'Paper: 32.'),
      int('model.nsa.d', 'Compression stride d', 'Divides l and l′. Paper: 16.'),
      int('model.nsa.lSel', 'Selection block l′', '≥ l. Paper: 64.'),
      int('model.nsa.nSel', 'Selected blocks n', 'Forced blocks included. Paper: 16.'),
      int('model.nsa.w', 'Sliding window w', 'Paper: 512.'),
      select('model.nsa.phi', 'Compression φ', [
        { value: 'avg', label: 'avg (mean of the block)' },
        { value: 'mlp', label: 'mlp (learned, with position embedding)' },
      ]),
      { path: 'model.nsa.forceInit', label: 'Always select block 0', kind: { type: 'checkbox' } },
      int('model.nsa.forceLocal', 'Forced local blocks', 'The block holding t and the ones before it.', 0),
      {
        path: 'model.nsa.sharedKV',
        label: 'Share K/V across branches',
        kind: { type: 'checkbox' },
        hint: 'One K/V projection instead of one per branch.',
      },
      { path: 'model.nsa.gates', label: 'Gate ablation', kind: { type: 'gates' } },
    ],
  },
  {
    id: 'window',
    title: 'Sliding-window attention',
    fields: [int('model.window.w', 'Window w', 'Keys per query: the w most recent, itself included; ≤ T.')],
  },
  {
    id: 'moba',
    title: 'MoBA (mixture of block attention)',
    fields: [
      int('model.moba.blockSize', 'Block size B', 'Keys per block; ≤ T.'),
      int('model.moba.topK', 'Blocks per query k', 'Its own block included; ≤ ⌈T / B⌉.'),
    ],
  },
  {
    id: 'dsa',
    title: 'DeepSeek sparse attention',
    fields: [
      int('model.dsa.topK', 'Tokens per query k', 'Read in full: the k best-scored earlier tokens.'),
      int('model.dsa.indexHeads', 'Indexer heads H_I'),
      int('model.dsa.indexDim', 'Indexer head dim d_I', 'Even, ≤ dk.'),
      int('model.dsa.warmupSteps', 'Dense warm-up steps', 'Only the indexer learns meanwhile.', 0),
      num('model.dsa.lossWeight', 'Indexer loss weight λ', '> 0'),
    ],
  },
  {
    id: 'train',
    title: 'Training',
    fields: [
      int('train.steps', 'Steps', 'Optimizer steps; the LR schedule spans them.'),
      int('train.batchSize', 'Batch size', 'Sequences per micro-batch.'),
      int('train.gradAccum', 'Gradient accumulation', 'Micro-batches per optimizer step.'),
      num('train.lrMax', 'Peak learning rate'),
      num('train.lrMin', 'Final learning rate', 'Cosine decay ends here; ≤ peak.', 0),
      int('train.warmupSteps', 'Warmup steps', undefined, 0),
      num('train.warmupStartFraction', 'Warmup start fraction', 'Warmup starts at peak × this, in (0, 1].'),
      {
        ...int(
          'train.shortSeqSteps',
          'Short-sequence steps',
          'Sequence-length warm-up: the first steps train shorter sequences; 0: none.',
          0,
        ),
        absent: 0,
      },
      { ...int('train.shortSeqLen', 'Short sequence length', 'Tokens per sequence in those steps (below the model’s).'), absent: 0 },
      {
        ...int('train.shortSeqPairs', 'Short-sequence pairs', 'Recall tasks: key-value pairs in those steps; 0: the task’s.', 0),
        absent: 0,
      },
      num('train.weightDecay', 'Weight decay', 'Decoupled (AdamW).', 0),
      num('train.beta1', 'Adam β₁', undefined, 0),
      num('train.beta2', 'Adam β₂', undefined, 0),
      num('train.eps', 'Adam ε'),
      num('train.gradClip', 'Gradient clip', 'Global norm; 0 disables.', 0),
      int('train.seed', 'Seed', 'Initialisation and data order.', 0),
      int('train.evalEvery', 'Evaluate every', 'Steps between validation losses; 0 disables.', 0),
      int('train.evalBatches', 'Validation batches', undefined, 0),
      int('train.logEvery', 'Log every', 'Steps between heartbeats.'),
    ],
  },
  {
    id: 'data',
    title: 'Data',
    fields: [
      select('data.source', 'Data source', [
        { value: 'brown', label: 'Brown corpus' },
        { value: 'random', label: 'random tokens' },
        { value: 'copy', label: 'copy task' },
        { value: 'upload', label: 'uploaded .txt file' },
        { value: 'recall', label: 'associative recall task' },
        { value: 'passkey', label: 'passkey retrieval (needle in a haystack)' },
      ]),
      select('data.tokenizer', 'Tokenizer', [
        { value: 'byte', label: 'bytes (vocab 256)' },
        { value: 'gpt2', label: 'GPT-2 BPE (vocab 50257)' },
      ]),
      // The recall task (data source 'recall' only); token ids: fillers, then keys, then values.
      int('data.recall.keys', 'Recall keys', 'Distinct key tokens K; ≥ pairs.'),
      int('data.recall.values', 'Recall values', 'Value tokens V; chance accuracy is 1/V.'),
      int('data.recall.fillers', 'Filler tokens', 'Between the pairs; 1 = a constant filler.'),
      int('data.recall.pairs', 'Pairs per sequence', 'Key→value pairs: the queried ones plus distractors.'),
      int('data.recall.queries', 'Queries per sequence', 'At the end of the sequence; ≤ pairs.'),
      int('data.recall.minDistance', 'Minimum answer distance', 'Each queried value lies at least this far before its query.'),
      int('data.recall.minStart', 'First key position', 'Queried keys lie at this position or later (0 = anywhere).', 0),
      {
        ...select('data.recall.layout', 'Recall layout', [
          { value: 'scattered', label: 'scattered pairs, queries at the end' },
          { value: 'mqar', label: 'MQAR: pairs first, queries at power-law gaps' },
        ]),
        absent: 'scattered',
      },
      // The passkey task (data source 'passkey' only); token ids: fillers, the two markers, then digits.
      int('data.passkey.digits', 'Passkey digits', 'Digit tokens D; chance accuracy per digit is 1/D.', 2),
      int('data.passkey.keyLength', 'Passkey length', 'Digits k after the needle marker and after the query marker.'),
      int('data.passkey.fillers', 'Filler tokens', 'The haystack around the needle; 1 = a constant filler.'),
      num('data.passkey.minDepth', 'Shallowest needle', 'Depth in [0, 1]: 0 = the sequence start, 1 = right before the query.', 0),
      num('data.passkey.maxDepth', 'Deepest needle', 'Depth in [0, 1]; ≥ the shallowest.', 0),
    ],
  },
];

/**
 * Objects a config may leave out: model.nsa, model.window, model.moba, model.dsa (the options of an
 * attention the model may not use), data.recall and data.passkey (sources other than that task).
 */
export const OPTIONAL_OBJECTS: readonly string[] = ['model.nsa', 'model.window', 'model.moba', 'model.dsa', 'data.recall', 'data.passkey'];

/** The sections holding one attention mechanism's options, each used only when model.attention is its id. */
export const MECHANISM_SECTIONS: ReadonlyArray<SectionId> = ['nsa', 'window', 'moba', 'dsa'];

/** How the attention select names each mechanism (its option label's short form). */
export const ATTENTION_NAMES: Readonly<Record<string, string>> = {
  dense: 'dense',
  nsa: 'NSA',
  window: 'sliding-window',
  moba: 'MoBA',
  dsa: 'DSA',
};

export const ALL_FIELDS: readonly FieldSpec[] = SECTIONS.flatMap((s) => s.fields);

const BY_PATH = new Map(ALL_FIELDS.map((f) => [f.path, f]));

export function fieldSpec(path: string): FieldSpec | undefined {
  return BY_PATH.get(path);
}

/** A mechanism's fields (NSA, window, MoBA, DSA) only matter when the model uses that attention. */
export function sectionApplies(id: SectionId, c: RunConfig): boolean {
  return !MECHANISM_SECTIONS.includes(id) || c.model.attention === id;
}

/** The recall task's fields (shown with the data source when it is 'recall'). */
export const RECALL_FIELDS: readonly FieldSpec[] = ALL_FIELDS.filter((f) => f.path.startsWith('data.recall.'));

/** The passkey task's fields (shown with the data source when it is 'passkey'). */
export const PASSKEY_FIELDS: readonly FieldSpec[] = ALL_FIELDS.filter((f) => f.path.startsWith('data.passkey.'));

/** The DOM id of a field's input and of its error message. */
export function fieldDomId(path: string): string {
  return `cfg-${path.replace(/\./g, '-')}`;
}

export function errorDomId(path: string): string {
  return `${fieldDomId(path)}-error`;
}
