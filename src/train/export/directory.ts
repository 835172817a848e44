// The exported directory as bytes, both ways (browser-safe: no Node APIs, so the page can offer the
// same files): config.json, model.safetensors (the weights under Hugging Face Llama-style names in
// nn.Linear's [out, in] orientation) and optimizer.safetensors (AdamW's moments as
// `exp_avg.<name>` / `exp_avg_sq.<name>`, same names and orientation, metadata `step`), both with
// safetensors metadata `format: pt` (what transformers requires); the tokenizer files, a model card
// (README.md) and, for a model Llama cannot express, the custom code. The Python package
// (python/nsa_playground) reads and writes the same files.
import { numel } from '../../definitions/params';
import { CheckpointFormatError, type TrainerState, type TrainingCheckpoint } from '../checkpoint/checkpoint';
import { decodeSafetensors, encodeSafetensors, type NamedTensor } from '../checkpoint/safetensors';
import type { RunConfig } from '../config';
import type { EvalMetrics, StepMetrics } from '../types';
import { CODE_FILES } from './code-files';
import { CONFIG_FILE, exportConfigJson, llamaBlockers, MODEL_FILE, OPTIMIZER_FILE, parseExportConfigJson } from './config-json';
import { exportedTensors, fromExported, toExported } from './hf-names';
import { MODEL_CARD_FILE, modelCard } from './model-card';
import { tokenizerFiles } from './tokenizer-files';

/** safetensors metadata `format`: 'pt' (torch tensors), the value transformers requires to load a file. */
export const SAFETENSORS_FORMAT = 'pt';

/** What an export holds: a run's config, trainer state, parameters and AdamW moments (our names). */
export interface ExportSource {
  config: RunConfig;
  state: TrainerState;
  params: ReadonlyMap<string, Float32Array>;
  adamM: ReadonlyMap<string, Float32Array>;
  adamV: ReadonlyMap<string, Float32Array>;
  /** The run's history, for the model card's losses (optional). */
  metrics?: readonly StepMetrics[];
  evals?: readonly EvalMetrics[];
}

export interface ExportFile {
  /** File name inside the directory. */
  name: string;
  bytes: Uint8Array;
}

/** Default cap on one exported file read (2 GiB). */
const MAX_FILE_BYTES = 2 * 1024 ** 3;

function tensorsOf(src: ExportSource, map: ReadonlyMap<string, Float32Array>, what: string, prefix: string): NamedTensor[] {
  return exportedTensors(src.config.model).map((t) => {
    const data = map.get(t.ours);
    if (!data) throw new Error(`export: ${what} has no tensor '${t.ours}'`);
    if (data.length !== numel(t.shape)) throw new Error(`export: ${what} '${t.ours}' has ${data.length} values for shape [${t.shape}]`);
    return { name: `${prefix}${t.hf}`, shape: t.hfShape, data: toExported(t, data) };
  });
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value, null, 2) + '\n');

/**
 * The directory's files as bytes: config.json, model.safetensors, optimizer.safetensors, the
 * tokenizer files, README.md (the model card) and, for a model Llama cannot express, the custom code.
 */
export function exportDirectoryFiles(src: ExportSource): ExportFile[] {
  const model = encodeSafetensors(tensorsOf(src, src.params, 'params', ''), { format: SAFETENSORS_FORMAT });
  const optimizer = encodeSafetensors(
    [...tensorsOf(src, src.adamM, 'adamM', 'exp_avg.'), ...tensorsOf(src, src.adamV, 'adamV', 'exp_avg_sq.')],
    { format: SAFETENSORS_FORMAT, step: String(src.state.stepsDone) },
  );
  const code = llamaBlockers(src.config.model).length ? Object.entries(CODE_FILES) : [];
  return [
    { name: CONFIG_FILE, bytes: json(exportConfigJson(src.config, src.state)) },
    { name: MODEL_FILE, bytes: model },
    { name: OPTIMIZER_FILE, bytes: optimizer },
    ...Object.entries(tokenizerFiles(src.config)).map(([name, value]) => ({ name, bytes: json(value) })),
    { name: MODEL_CARD_FILE, bytes: new TextEncoder().encode(modelCard(src)) },
    ...code.map(([name, text]) => ({ name, bytes: new TextEncoder().encode(text) })),
  ];
}

/** The bytes of an exported directory's files, by name; `dir` names them in errors. */
export interface ExportDirectoryBytes {
  dir: string;
  config: Uint8Array;
  model: Uint8Array;
  optimizer: Uint8Array;
}

/**
 * A training checkpoint from an exported directory (its config, step, weights and moments; no
 * metrics). Throws CheckpointFormatError naming the file (dir/config.json, …) and the field or tensor.
 */
export function importDirectoryFiles(files: ExportDirectoryBytes, o: { savedAt?: Date } = {}): TrainingCheckpoint {
  const path = (name: string) => `${files.dir.replace(/\/+$/, '')}/${name}`;
  const configPath = path(CONFIG_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(files.config));
  } catch (e) {
    throw new CheckpointFormatError(configPath, '(file)', `is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  const { config, state } = parseExportConfigJson(raw, (field, detail) => {
    throw new CheckpointFormatError(configPath, field, detail);
  });
  const expected = exportedTensors(config.model);
  const read = (name: string, bytes: Uint8Array, groups: ReadonlyArray<readonly [string, string]>) => {
    const file = path(name);
    const { metadata, tensors } = decodeSafetensors(bytes, { file, maxBytes: MAX_FILE_BYTES });
    const known = new Set<string>();
    const out = groups.map(([prefix]) => {
      const map = new Map<string, Float32Array>();
      for (const t of expected) {
        const key = `${prefix}${t.hf}`;
        known.add(key);
        const got = tensors.get(key);
        if (!got) throw new CheckpointFormatError(file, key, `tensor missing (expected shape [${t.hfShape.join(', ')}])`);
        if (got.shape.length !== t.hfShape.length || got.shape.some((d, i) => d !== t.hfShape[i]))
          throw new CheckpointFormatError(file, key, `expected shape [${t.hfShape.join(', ')}], found [${got.shape.join(', ')}]`);
        map.set(t.ours, fromExported(t, got.data));
      }
      return map;
    });
    for (const key of tensors.keys())
      if (!known.has(key)) throw new CheckpointFormatError(file, key, 'unexpected tensor (not a parameter of this model)');
    return { metadata, maps: out };
  };
  const [params] = read(MODEL_FILE, files.model, [['', 'params']]).maps;
  const opt = read(OPTIMIZER_FILE, files.optimizer, [
    ['exp_avg.', 'adamM'],
    ['exp_avg_sq.', 'adamV'],
  ]);
  if (opt.metadata.step !== String(state.stepsDone))
    throw new CheckpointFormatError(
      path(OPTIMIZER_FILE),
      '__metadata__.step',
      `is ${JSON.stringify(opt.metadata.step)}, but config.json's state.step is ${state.stepsDone}`,
    );
  return {
    config,
    state,
    params,
    adamM: opt.maps[0],
    adamV: opt.maps[1],
    metrics: [],
    evals: [],
    reason: 'imported',
    savedAt: (o.savedAt ?? new Date()).toISOString(),
  };
}
