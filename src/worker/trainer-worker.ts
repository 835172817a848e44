// The trainer's dedicated worker: owns the GPU device and the training run, so the page's thread
// only renders. Exposed with comlink; the page talks to it through ./client.ts.
import * as Comlink from 'comlink';

import { type BenchRow, benchSizeProblem, DECODE_LAYERS, resolveBenchNsa } from '../bench/bench-sizes';
import { BenchStopped, runNsaBench } from '../bench/run-bench';
import type { SelectionSnapshot } from '../definitions/selection-snapshot';
import { acquireBrowserGpu, WebGpuUnavailableError } from '../gpu/browser-device';
import { describeAdapter, type GpuContext } from '../gpu/context';
import { matmulPartsFloats } from '../kernels/matmul';
import { assertValidRunConfig } from '../train/config';
import { loadBrownText } from '../train/data/brown-browser';
import { ANY_ADAPTER_LIMITS, assertRunResources, limitsOfAdapter } from '../train/resources';
import type {
  AdapterProbe,
  BenchRequest,
  ExportFiles,
  GenerateRequest,
  GenerateResult,
  GenerateStart,
  InitInfo,
  InitRequest,
  RunHistory,
  StreamedToken,
  TrainOptions,
  TrainResult,
  TrainUpdate,
} from './protocol';
import type { PlaygroundRun } from './run';
import type { TestFault } from './session';

let gpu: Promise<GpuContext> | null = null;
const corpus = new Map<string, Promise<string>>();
let run: PlaygroundRun | null = null;
/** The benchmark running (one at a time) and whether it was asked to stop. */
let bench: { stop: boolean } | null = null;
/** Bumped by init and reset: an init that finishes after a newer call discards its run. */
let epoch = 0;

/** The page's callback for a lost device (onDeviceLost); not called for a device releaseDevice() destroyed. */
let lostListener: ((message: string) => void) | null = null;
let lostProxy: unknown = null;
let releasing = false;

/** The worker's one device; dropped once lost so the next call acquires a fresh one, and the page told. */
function device(): Promise<GpuContext> {
  if (!gpu) {
    const p = acquireBrowserGpu();
    gpu = p;
    p.then(
      (ctx) =>
        void ctx.lost.then((r) => {
          if (gpu === p) gpu = null;
          if (!releasing) lostListener?.(r.message);
        }),
      () => {
        if (gpu === p) gpu = null;
      },
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

function current(): PlaygroundRun {
  if (!run) throw new Error('No run: call init() first.');
  return run;
}

/** Closes a comlink callback's message port now rather than at garbage collection. */
function release(cb: unknown): void {
  (cb as Partial<Comlink.Remote<unknown>>)[Comlink.releaseProxy]?.();
}

/** A comlink callback returns a promise; a closed page must not fail the worker's work. */
function fireAndForget<T>(cb: (x: T) => void): (x: T) => void {
  return (x) => void Promise.resolve(cb(x) as unknown).catch(() => {});
}

async function dropRun(): Promise<void> {
  const r = run;
  run = null;
  await r?.stop();
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
   * Builds a new run (data, model, optimizer state) from the request, replacing any previous run.
   * Compiles every pipeline: seconds on a GPU, minutes on SwiftShader.
   */
  async init(req: InitRequest): Promise<InitInfo> {
    const mine = ++epoch;
    await dropRun();
    if (!req.checkpoint) {
      // A checkpoint's config is validated as it is decoded. A new one: its fields, then what no
      // adapter could hold, then (below) this adapter's limits, all before anything is allocated.
      assertValidRunConfig(req.config, 'Invalid run config');
      assertRunResources(req.config, ANY_ADAPTER_LIMITS, 'Invalid run config');
    }
    if (!(Number.isInteger(req.snapshotEvery) && req.snapshotEvery >= 0))
      throw new Error(`snapshotEvery must be an integer ≥ 0 (got ${req.snapshotEvery})`);
    const [ctx, { PlaygroundRun }] = await Promise.all([device(), import('./run')]);
    if (!req.checkpoint)
      assertRunResources(
        req.config,
        limitsOfAdapter(ctx.adapter.limits, describeAdapter(ctx.adapter), { matmulPartsFloats: matmulPartsFloats(ctx.adapter) }),
        'Run too large for this adapter',
      );
    const created = await PlaygroundRun.create(ctx, req, () => brownText(req.pageUrl));
    if (mine !== epoch) {
      await created.stop();
      throw new Error('This run was replaced by a newer init or reset before it started.');
    }
    run = created;
    return { adapter: ctx.adapter, ...created.info };
  },

  /**
   * Trains `steps` more steps of the current run. Updates stream through `onUpdate` (pass it
   * wrapped in Comlink.proxy), at most 10 calls per second. Resolves when done, paused or reset;
   * rejects with a readable message on device loss, GPU errors or a non-finite loss.
   */
  async train(steps: number, onUpdate: (u: TrainUpdate) => void, opts: TrainOptions = {}): Promise<TrainResult> {
    try {
      return await current().train(steps, fireAndForget(onUpdate), opts);
    } finally {
      release(onUpdate);
    }
  },

  /** Ends the current train() call after the step in flight; train() again resumes. */
  pause(): void {
    run?.pause();
  },

  /** Discards the run (mid-run too: after the step in flight) and frees its GPU memory. */
  async reset(): Promise<void> {
    epoch++;
    await dropRun();
  },

  /** Steps of the kept selection snapshots, ascending (empty for dense models or no run). */
  snapshotSteps(): number[] {
    return run?.snapshotSteps ?? [];
  },

  /** The kept snapshot of (step, layer, group); null when that step is no longer kept. */
  snapshot(step: number, layer: number, group: number): SelectionSnapshot | null {
    return current().snapshot(step, layer, group);
  },

  /**
   * Generates from the current weights on the GPU decoder (in this worker; training may go on).
   * `onStart` gets the tokenized prompt, `onTokens` the tokens in order, ≤ 10 calls per second.
   */
  async generate(
    req: GenerateRequest,
    onStart: (s: GenerateStart) => void,
    onTokens: (t: StreamedToken[]) => void,
  ): Promise<GenerateResult> {
    try {
      return await current().generate(req, fireAndForget(onStart), fireAndForget(onTokens));
    } finally {
      release(onStart);
      release(onTokens);
    }
  },

  /**
   * The NSA-vs-dense benchmark of npm run bench:nsa on this worker's device (src/bench):
   * `onLine` gets each JSON line as it is measured. Refused while a run trains (both would share
   * the GPU) and for sizes the adapter cannot hold, before anything is allocated. Resolves when the
   * summary line is sent, or early (without it) after cancelBenchmark().
   */
  async benchmark(req: BenchRequest, onLine: (line: BenchRow) => void): Promise<void> {
    try {
      if (bench) throw new Error('A benchmark is already running.');
      if (run?.training) throw new Error('Pause the training run first: the benchmark and training would share the GPU.');
      const ctx = await device();
      const o = resolveBenchNsa(
        {
          Ts: req.Ts,
          train: req.train,
          decode: req.decode,
          repeats: undefined,
          warmup: undefined,
          layers: DECODE_LAYERS,
          mechanisms: req.mechanisms,
        },
        ctx.adapter.software,
      );
      const limits = ctx.device.limits;
      const p = benchSizeProblem(o, {
        maxBufferSize: limits.maxBufferSize,
        maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
        source: `this adapter (${describeAdapter(ctx.adapter)})`,
      });
      if (p)
        throw new Error(
          `Context length ${p.T} ${p.needs}${p.fitsUpTo >= 1 ? `: lengths up to ${p.fitsUpTo} fit` : ''}. Nothing was allocated.`,
        );
      const mine = { stop: false };
      bench = mine;
      const send = fireAndForget(onLine);
      try {
        await runNsaBench(ctx, o, send, () => mine.stop);
      } catch (e) {
        if (!(e instanceof BenchStopped)) throw e;
      } finally {
        bench = null;
      }
    } finally {
      release(onLine);
    }
  },

  /** Ends the running benchmark before its next measurement. */
  cancelBenchmark(): void {
    if (bench) bench.stop = true;
  },

  /** Stops the running generation after its current token (it resolves with stop 'cancelled'). */
  cancelGenerate(): void {
    run?.cancelGenerate();
  },

  /**
   * The run as a checkpoint.safetensors file (the CLI's format; --resume and init({ checkpoint })
   * continue it). Only while paused or done; the bytes are transferred, not copied.
   */
  async checkpoint(): Promise<Uint8Array> {
    const bytes = await current().checkpoint();
    return Comlink.transfer(bytes, [bytes.buffer]);
  },

  /** Every step's metrics and evaluation of the run so far, in order (what its checkpoint holds). */
  history(): RunHistory {
    return current().history;
  },

  /** The run's heartbeat.jsonl, metrics.csv and config.json, in the CLI's formats. */
  exportFiles(): ExportFiles {
    return current().exportFiles();
  },

  /**
   * Drops this worker's device (destroyed: its queued work is abandoned) before the page terminates
   * the worker, so a fresh worker's device does not wait behind it. The run is gone with it.
   */
  async releaseDevice(): Promise<void> {
    releasing = true;
    epoch++;
    const r = run;
    run = null;
    const g = gpu;
    gpu = null;
    r?.pause();
    if (g) (await g.catch(() => null))?.device.destroy();
  },

  /**
   * `onLost` (wrapped in Comlink.proxy) is called with the reason whenever this worker's device is
   * lost (a driver reset, a GPU process crash, device.destroy() by a test hook), training or not.
   */
  onDeviceLost(onLost: (message: string) => void): void {
    if (lostProxy) release(lostProxy);
    lostProxy = onLost;
    lostListener = fireAndForget(onLost);
  },

  /** Test hook (?testHooks=1): destroy the device now (the run stays; its next GPU call fails). */
  __debugLoseDevice(): void {
    current().debugLoseDevice();
  },

  /** Test hook (?testHooks=1): destroy the device, or block this thread, before step `fault.atStep`. */
  __debugFault(fault: TestFault): void {
    current().debugFault(fault);
  },

  /** Test hook (the page was opened with ?testHooks=1): the next training step waits `ms` first. */
  __debugStall(ms: number): void {
    current().debugStall(ms);
  },
};

export type TrainerWorkerApi = typeof api;

Comlink.expose(api);
