// The trainer's dedicated worker: owns the GPU device and the training run, so the page's thread
// only renders. Exposed with comlink; the page talks to it through ./client.ts.
import * as Comlink from 'comlink';
import { acquireBrowserGpu, WebGpuUnavailableError } from '../gpu/browser-device';
import type { GpuContext } from '../gpu/context';
import { formatConfigErrors } from '../model/config';
import { loadBrownText } from '../train/brown-browser';
import { validateRunConfig, type RunConfig } from '../train/config';
import type { AdapterProbe, InitInfo, TrainResult, TrainUpdate } from './protocol';
import { TrainingSession } from './session';

let gpu: Promise<GpuContext> | null = null;
const corpus = new Map<string, Promise<string>>();
let session: TrainingSession | null = null;

/** The worker's one device; dropped once lost so the next call acquires a fresh one. */
function device(): Promise<GpuContext> {
  if (!gpu) {
    const p = acquireBrowserGpu();
    gpu = p;
    p.then(
      (ctx) => void ctx.lost.then(() => { if (gpu === p) gpu = null; }),
      () => { if (gpu === p) gpu = null; },
    );
  }
  return gpu;
}

function brownText(pageUrl: string): Promise<string> {
  let p = corpus.get(pageUrl);
  if (!p) {
    p = loadBrownText(pageUrl);
    corpus.set(pageUrl, p);
    p.catch(() => corpus.delete(pageUrl));
  }
  return p;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const api = {
  /** Acquires the device (kept for init) and describes its adapter, or says why there is none. */
  async getAdapter(): Promise<AdapterProbe> {
    try {
      return { ok: true, adapter: (await device()).adapter };
    } catch (e) {
      const prefix = e instanceof WebGpuUnavailableError ? '' : 'WebGPU device creation failed: ';
      return { ok: false, message: prefix + message(e) };
    }
  },

  /**
   * Builds a new run (model, optimizer state, data) for `config`, replacing any previous one.
   * `pageUrl` is the page's document.baseURI: data/brown.txt is resolved against it.
   */
  async init(config: RunConfig, pageUrl: string): Promise<InitInfo> {
    session?.stop();
    session = null;
    const errs = validateRunConfig(config);
    if (errs.length) throw new Error(`Invalid run config:\n${formatConfigErrors(errs)}`);
    if (config.data.source !== 'brown')
      throw new Error(`This page trains on the Brown corpus only (config.data.source is '${config.data.source}').`);
    const [ctx, text, { buildRun }] = await Promise.all([device(), brownText(pageUrl), import('./build-run')]);
    // The session is created right after the trainer; heartbeats before that have nowhere to go.
    let created: TrainingSession | null = null;
    const trainer = await buildRun(ctx, config, text, (b) => created?.onHeartbeat(b));
    created = new TrainingSession(trainer, ctx);
    session = created;
    return { adapter: ctx.adapter, corpusChars: text.length };
  },

  /**
   * Trains `steps` more steps of the current run. Metrics stream through `onUpdate` (pass it
   * wrapped in Comlink.proxy), at most 10 calls per second. Resolves when done, paused or stopped;
   * rejects with a readable message on device loss, GPU errors or a non-finite loss.
   */
  async train(steps: number, onUpdate: (u: TrainUpdate) => void): Promise<TrainResult> {
    if (!session) throw new Error('No run: call init() first.');
    const emit = (u: TrainUpdate): void => {
      // A comlink callback returns a promise; a closed page must not fail the run.
      void Promise.resolve(onUpdate(u) as unknown).catch(() => {});
    };
    try {
      return await session.train(steps, emit);
    } finally {
      // Close the callback's message port now rather than at garbage collection.
      (onUpdate as Partial<Comlink.Remote<unknown>>)[Comlink.releaseProxy]?.();
    }
  },

  /** Ends the current train() call after the step in flight; train() again resumes. */
  pause(): void {
    session?.pause();
  },

  /** Ends the run after the step in flight and frees its GPU memory. */
  stop(): void {
    session?.stop();
  },
};

export type TrainerWorkerApi = typeof api;

Comlink.expose(api);
