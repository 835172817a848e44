// Types exchanged between the page and the trainer worker (all structured-cloneable).
import type { OtherMechanism } from '../bench/mechanism-bench';
import type { GroupReads } from '../decode/generate';
import type { AdapterSummary } from '../gpu/context';
import type { RunConfig } from '../train/config';
import type { TokenizerName } from '../train/data/tokenizer';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';

export type AdapterProbe = { ok: true; adapter: AdapterSummary } | { ok: false; message: string };

/**
 * Where the training tokens come from, one kind per config.data.source. `brown` is fetched by the
 * worker (data/brown.txt next to the page); `upload` carries the text of a file the page has
 * already validated; `recall` generates the task in config.data.recall.
 */
export type DataSpec =
  | { kind: 'brown' }
  | { kind: 'upload'; name: string; text: string }
  | { kind: 'random' }
  | { kind: 'copy' }
  | { kind: 'recall' }
  | { kind: 'passkey' };

export interface InitRequest {
  config: RunConfig;
  data: DataSpec;
  /** The page's document.baseURI: data/brown.txt is resolved against it. */
  pageUrl: string;
  /** NSA models: keep a selection snapshot every this many steps (0 = none). */
  snapshotEvery: number;
  /** Honour __debugStall (the page was opened with ?testHooks=1). */
  testHooks?: boolean;
  /**
   * A checkpoint file (CLI- or page-made, transferred) to continue from. Its config replaces
   * `config` (InitInfo.config sends it back), snapshotEvery is derived from it
   * (defaultSnapshotEvery), and its data is rebuilt from it; `data` is used only when the
   * checkpoint trained on an uploaded text ('upload'): it must then carry that same text.
   */
  checkpoint?: Uint8Array;
  /** The checkpoint's file name, for error messages. */
  checkpointFile?: string;
}

/** Snapshot every K steps: about 64 over the run (the worker thins them to its budget); 0 for attentions without a selection (dense, the window). */
export function defaultSnapshotEvery(c: RunConfig): number {
  const a = c.model.attention;
  return a === 'nsa' || a === 'moba' || a === 'dsa' ? Math.max(1, Math.round(c.train.steps / 64)) : 0;
}

export interface DatasetInfo {
  name: string;
  vocabSize: number;
  /** null for synthetic token datasets (ids are shown as numbers). */
  tokenizer: TokenizerName | null;
  /** Tokens per split; null for generated (unbounded) datasets. */
  trainTokens: number | null;
  valTokens: number | null;
  /** Unigram entropy of the training split (nats/token): the loss a context-free model reaches. */
  unigramEntropy: number;
}

export interface InitInfo {
  adapter: AdapterSummary;
  dataset: DatasetInfo;
  paramCount: number;
  gpuBytes: number;
  tokensPerStep: number;
  /** The trainer's 'init' heartbeat. */
  heartbeat: Heartbeat | null;
  /** Most selection snapshots kept at once (0 for dense models); older ones are thinned out. */
  snapshotCapacity: number;
  /** The config the run trains (a checkpoint's, when continuing from one). */
  config: RunConfig;
  /** Steps already trained (a checkpoint's step; 0 for a new run). */
  stepsDone: number;
  /** A checkpoint's step metrics and evaluations so far (empty for a new run). */
  metrics: StepMetrics[];
  evals: EvalMetrics[];
}

/** One batched message from a running train() call (at most 10 per second). */
export interface TrainUpdate {
  /** New step metrics since the previous update, in step order. */
  metrics: StepMetrics[];
  /** Validation losses computed since the previous update. */
  evals: EvalMetrics[];
  /** The latest heartbeat since the previous update, if any. */
  heartbeat: Heartbeat | null;
  /** When the kept snapshots changed: the steps of all snapshots now available, ascending. */
  snapshotSteps: number[] | null;
}

export type TrainEnd = 'done' | 'paused' | 'stopped';

/** Options of one train() call. */
export interface TrainOptions {
  /**
   * Early stop (a sweep's target, as `npm run learn --target`): the call pauses right after the
   * first evaluation whose task answer accuracy is at least this (text runs have none: never).
   */
  stopAtAccuracy?: number;
}

export interface TrainResult {
  end: TrainEnd;
  stepsDone: number;
  last: StepMetrics | null;
  /** The heartbeat logged at the end ('paused' or 'done' phase); null when stopped. */
  heartbeat: Heartbeat | null;
}

export interface GenerateRequest {
  prompt: string;
  /** Most tokens to generate (the context length also stops it). */
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** 0 = no limit. */
  topK: number;
  /** Nucleus sampling in (0, 1]; absent or 1 = no limit. */
  topP?: number;
  seed: number;
  /** Wait at least this long between tokens, so a fast model still streams visibly (0 = none). */
  tokenDelayMs?: number;
}

/** One generated token as the page sees it. */
export interface StreamedToken {
  /** Index among the generated tokens (0-based). */
  index: number;
  token: number;
  /** Decoded text of this token alone (for synthetic data, its id in brackets). */
  text: string;
  /** Position of the query whose logits it was sampled from. */
  t: number;
  /** NSA only, per layer: the selected blocks of query t, int32 [G, nSel] ascending, −1 padded. */
  selection: Int32Array[];
  /** NSA only: keys read per (layer, group), with the paper's formula beside them. */
  reads: GroupReads[];
}

export interface GenerateStart {
  promptTokens: number[];
  /** Decoded prompt pieces, one per prompt token. */
  promptPieces: string[];
  /** Which decoder generates (e.g. the GPU decoder and its adapter). */
  decoder?: string;
}

export interface GenerateResult {
  promptTokens: number[];
  tokens: number[];
  /** Decoded generated text. */
  text: string;
  /** 'tokens': maxTokens reached; 'context': the context is full; 'cancelled': cancelGenerate(). */
  stop: 'tokens' | 'context' | 'cancelled';
  /** The training step whose weights generated it. */
  step: number;
}

/** A run's step metrics and evaluations so far, in step order. */
export interface RunHistory {
  metrics: StepMetrics[];
  evals: EvalMetrics[];
}

/** Downloads, with the CLI's formats: heartbeat.jsonl, metrics.csv and config.json. */
export interface ExportFiles {
  heartbeatsJsonl: string;
  metricsCsv: string;
  configJson: string;
}

/** At most this many TrainUpdate (and generation) messages per second reach the page. */
export const MAX_UPDATES_PER_SECOND = 10;

/** The page's benchmark view: what npm run bench:nsa measures, on this worker's device. */
export interface BenchRequest {
  /** Context lengths, ascending. */
  Ts: number[];
  /** Training attention fwd+bwd per T. */
  train: boolean;
  /** Decode per token at position T − 1. */
  decode: boolean;
  /** Mechanisms timed beside NSA and dense at NSA's budget (training: all three; decode: window and MoBA). */
  mechanisms: OtherMechanism[];
}

/**
 * The data a checkpoint's run trains on: rebuilt from its config, except an uploaded text, which
 * the checkpoint does not hold: the page must offer the same text file (`offered`).
 */
export function checkpointData(config: RunConfig, offered: DataSpec, file: string): DataSpec {
  switch (config.data.source) {
    case 'upload':
      if (offered.kind !== 'upload')
        throw new Error(
          `${file} was trained on an uploaded text file, which a checkpoint does not hold: pick that same .txt file first (Data panel, source 'upload'), then continue from the checkpoint again.`,
        );
      return offered;
    case 'brown':
    case 'random':
    case 'copy':
    case 'recall':
      return { kind: config.data.source };
    case 'passkey':
      return { kind: 'passkey' };
  }
}
