// The generation panel's contract with the page. The shapes match the worker protocol
// (src/worker/protocol.ts GenerateRequest / GenerateStart / StreamedToken / GenerateResult)
// structurally, so the page can pass its client's calls straight through:
//   onGenerate={(req, sink) => client.generate(req, sink.start, sink.tokens)}
//   onCancel={() => client.cancelGenerate()}
import type { DsaConfig } from '../../definitions/dsa-config';
import type { NsaConfig } from '../../definitions/nsa-config';

export interface GenerationRequest {
  prompt: string;
  /** Most tokens to generate (the context length also stops it). */
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** 0 = no limit. */
  topK: number;
  /** Nucleus sampling in (0, 1]; 1 = no limit. */
  topP: number;
  seed: number;
}

/** Sent once, before the first token: the prompt as the tokenizer split it. */
export interface GenerationStart {
  promptTokens: number[];
  /** Decoded prompt pieces, one per prompt token. */
  promptPieces: string[];
  /** Which decoder generates (e.g. the GPU decoder and its adapter). */
  decoder?: string;
}

/** One generated token. */
export interface GeneratedPiece {
  /** Index among the generated tokens (0-based, consecutive). */
  index: number;
  token: number;
  /** Decoded text of this token. */
  text: string;
  /** Position of the query whose logits it was sampled from (prompt length − 1 + index). */
  t: number;
  /** NSA only, per layer: the selected blocks of query t, [G·nSel] ascending, −1 padded (DSA: the selected tokens [G·k]). */
  selection: ReadonlyArray<ArrayLike<number>>;
}

export interface GenerationSink {
  start(s: GenerationStart): void;
  /** New tokens, in index order (batched by the worker). */
  tokens(t: GeneratedPiece[]): void;
}

export interface GenerationDone {
  stop: 'tokens' | 'context' | 'cancelled';
}

/** What the panel needs to know about the model generating. */
export interface GenerationModel {
  /** null for a dense model (no selection to show). */
  nsa: NsaConfig | null;
  /** DSA models: the indexer's config (the tokens each query attended are shown per layer). */
  dsa?: DsaConfig | null;
  H: number;
  G: number;
  layers: number;
  /** Context length: prompt + generated tokens fit in it. */
  contextLength: number;
  vocabSize: number;
  /** Training step of the weights (recorded with the generation). */
  step: number;
}
