// Generation for the page: tokenizes the prompt with the run's tokenizer (or reads token ids for
// synthetic data), streams tokens from generateStream in batches of at most 10 per second,
// yields to the worker's event loop between tokens (so training and cancel messages interleave),
// and stops early on cancel(). A new generation cancels the one running and starts once it has
// stopped (the runs share one decoder). The decoder comes from the run (the GPU decoder in the
// page); the default is the float64 CPU decoder.
import { cpuTokenDecoder, generateStream, type TokenDecoder } from '../decode/generate';
import type { ModelConfig } from '../definitions/model-config';
import type { Dataset } from '../train/data/datasets';
import { type GenerateRequest, type GenerateResult, type GenerateStart, MAX_UPDATES_PER_SECOND, type StreamedToken } from './protocol';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Token ids typed as text ("3 17 4" or "3,17,4") for datasets without a tokenizer. */
export function parseTokenIds(prompt: string, vocabSize: number): number[] {
  const t = prompt.trim();
  if (!/^\d+([\s,]+\d+)*$/.test(t))
    throw new Error(`This dataset has no tokenizer: type the prompt as token ids separated by spaces (0 to ${vocabSize - 1}).`);
  const ids = t.split(/[\s,]+/).map(Number);
  const bad = ids.find((id) => id >= vocabSize);
  if (bad !== undefined) throw new Error(`Token id ${bad} is outside this dataset's vocabulary (0 to ${vocabSize - 1}).`);
  return ids;
}

/** A fresh decoder over the given weights (nothing fed yet). */
export type DecoderFactory = (params: ReadonlyMap<string, ArrayLike<number>>) => Promise<TokenDecoder>;

export class TokenStreamer {
  private current = 0;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly model: ModelConfig,
    private readonly dataset: Dataset,
    private readonly decoderFor: DecoderFactory = (p) => Promise.resolve(cpuTokenDecoder(model, p)),
  ) {}

  private encode(prompt: string): number[] {
    const tok = this.dataset.tokenizer;
    return tok ? tok.encode(prompt) : parseTokenIds(prompt, this.dataset.vocabSize);
  }

  private decode(ids: number[]): string {
    const tok = this.dataset.tokenizer;
    return tok ? tok.decode(ids) : ids.map((id) => `[${id}]`).join('');
  }

  /** Ends the running generation after its current token. */
  cancel(): void {
    this.current++;
  }

  async run(
    params: ReadonlyMap<string, ArrayLike<number>>,
    step: number,
    req: GenerateRequest,
    onStart: (s: GenerateStart) => void,
    onTokens: (t: StreamedToken[]) => void,
  ): Promise<GenerateResult> {
    const id = ++this.current;
    const previous = this.running;
    const mine = previous.catch(() => undefined).then(() => this.generate(id, params, step, req, onStart, onTokens));
    this.running = mine;
    return mine;
  }

  private async generate(
    id: number,
    params: ReadonlyMap<string, ArrayLike<number>>,
    step: number,
    req: GenerateRequest,
    onStart: (s: GenerateStart) => void,
    onTokens: (t: StreamedToken[]) => void,
  ): Promise<GenerateResult> {
    const promptTokens = this.encode(req.prompt);
    const o = {
      maxTokens: req.maxTokens,
      temperature: req.temperature,
      topK: req.topK,
      topP: req.topP,
      seed: req.seed,
      vocabLimit: Math.min(this.dataset.vocabSize, this.model.vocabSize),
    };
    const decoder = await this.decoderFor(params);
    const stream = generateStream(this.model, decoder, promptTokens, o);
    const first = await stream.next(); // a generator body runs on the first next(): bad arguments throw here, before onStart
    onStart({ promptTokens, promptPieces: promptTokens.map((t) => this.decode([t])), decoder: decoder.name });
    const tokens: number[] = [];
    let pending: StreamedToken[] = [];
    let lastEmit = -Infinity;
    let text = '';
    const flush = () => {
      if (pending.length) onTokens(pending);
      pending = [];
      lastEmit = performance.now();
    };
    let cancelled = false;
    for (let r = first; !r.done; r = await stream.next()) {
      const s = r.value;
      tokens.push(s.token);
      // Decode the whole continuation so multi-byte characters come out whole once complete.
      const full = this.decode(tokens);
      const piece = full.startsWith(text) ? full.slice(text.length) : this.decode([s.token]);
      text = full;
      pending.push({ index: tokens.length - 1, token: s.token, text: piece, t: s.t, selection: s.selection, reads: s.reads });
      if (performance.now() - lastEmit >= 1000 / MAX_UPDATES_PER_SECOND) flush();
      await sleep(req.tokenDelayMs ?? 0);
      if (this.current !== id) {
        cancelled = true;
        break;
      }
    }
    flush();
    const stop = cancelled ? 'cancelled' : tokens.length === req.maxTokens ? 'tokens' : 'context';
    return { promptTokens, tokens, text: this.decode(tokens), stop, step };
  }
}
