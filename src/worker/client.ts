// The page's handle on the trainer worker: creates the module worker, wraps it with comlink, and
// turns a worker that fails to load or crashes into rejected calls instead of silent hangs.
import * as Comlink from 'comlink';

import type { BenchRow } from '../bench/bench-sizes';
import type { SelectionSnapshot } from '../definitions/selection-snapshot';
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
import type { TestFault } from './session';
import type { TrainerWorkerApi } from './trainer-worker';

/** Why the worker is gone: it failed to load or threw at top level, or the page terminated it. */
export type WorkerCrashReason = 'failed' | 'terminated';

export class WorkerCrashedError extends Error {
  override readonly name: string = 'WorkerCrashedError';
  readonly reason: WorkerCrashReason;
  /** The worker's error event message ('failed' only; may be empty when the browser gives none). */
  readonly workerMessage: string | undefined;

  constructor(reason: WorkerCrashReason, workerMessage?: string) {
    super(
      reason === 'terminated'
        ? 'The trainer worker was terminated.'
        : `The trainer worker failed: ${workerMessage || 'it could not be loaded or threw at top level'}`,
    );
    this.reason = reason;
    this.workerMessage = workerMessage;
  }
}

export class TrainerClient {
  private readonly worker: Worker;
  private readonly remote: Comlink.Remote<TrainerWorkerApi>;
  private readonly crashed: Promise<never>;
  private fail: (e: Error) => void = () => {};
  private terminated = false;

  constructor() {
    this.worker = new Worker(new URL('./trainer-worker.ts', import.meta.url), { type: 'module', name: 'nsa-trainer' });
    this.remote = Comlink.wrap<TrainerWorkerApi>(this.worker);
    this.crashed = new Promise<never>((_, reject) => {
      this.fail = reject;
      this.worker.addEventListener('error', (ev) => {
        ev.preventDefault();
        reject(new WorkerCrashedError('failed', ev.message));
      });
    });
    this.crashed.catch(() => {});
  }

  private call<T>(p: Promise<T>): Promise<T> {
    if (this.terminated) return Promise.reject(new WorkerCrashedError('terminated'));
    return Promise.race([p, this.crashed]);
  }

  getAdapter(): Promise<AdapterProbe> {
    return this.call<AdapterProbe>(this.remote.getAdapter());
  }

  /** Builds a new run; `req.pageUrl` defaults to this page (data/brown.txt is fetched next to it). */
  init(req: Omit<InitRequest, 'pageUrl'> & { pageUrl?: string }): Promise<InitInfo> {
    const full: InitRequest = { ...req, pageUrl: req.pageUrl ?? document.baseURI };
    // A checkpoint's bytes move to the worker (the caller's array is detached afterwards).
    return this.call(this.remote.init(full.checkpoint ? Comlink.transfer(full, [full.checkpoint.buffer]) : full));
  }

  train(steps: number, onUpdate: (u: TrainUpdate) => void, opts: TrainOptions = {}): Promise<TrainResult> {
    return this.call(this.remote.train(steps, Comlink.proxy(onUpdate), opts));
  }

  pause(): Promise<void> {
    return this.call(this.remote.pause());
  }

  reset(): Promise<void> {
    return this.call(this.remote.reset());
  }

  snapshotSteps(): Promise<number[]> {
    return this.call(this.remote.snapshotSteps());
  }

  snapshot(step: number, layer: number, group: number): Promise<SelectionSnapshot | null> {
    return this.call(this.remote.snapshot(step, layer, group));
  }

  generate(req: GenerateRequest, onStart: (s: GenerateStart) => void, onTokens: (t: StreamedToken[]) => void): Promise<GenerateResult> {
    return this.call(this.remote.generate(req, Comlink.proxy(onStart), Comlink.proxy(onTokens)));
  }

  cancelGenerate(): Promise<void> {
    return this.call(this.remote.cancelGenerate());
  }

  /** The NSA-vs-dense benchmark on the worker's device; each JSON line goes to onLine as it is measured. */
  benchmark(req: BenchRequest, onLine: (line: BenchRow) => void): Promise<void> {
    return this.call(this.remote.benchmark(req, Comlink.proxy(onLine)));
  }

  cancelBenchmark(): Promise<void> {
    return this.call(this.remote.cancelBenchmark());
  }

  /** The run's checkpoint file (transferred from the worker). */
  checkpoint(): Promise<Uint8Array> {
    return this.call(this.remote.checkpoint());
  }

  /** The run's metrics and evaluations so far (authoritative: train() updates may still be on their way). */
  history(): Promise<RunHistory> {
    return this.call(this.remote.history());
  }

  exportFiles(): Promise<ExportFiles> {
    return this.call(this.remote.exportFiles());
  }

  /** Test hook: honoured only when the run was initialised with testHooks. */
  debugStall(ms: number): Promise<void> {
    return this.call(this.remote.__debugStall(ms));
  }

  /** Test hook: a fault (device loss, a blocked thread) before a given step; honoured only with testHooks. */
  debugFault(fault: TestFault): Promise<void> {
    return this.call(this.remote.__debugFault(fault));
  }

  /** `onLost` is called whenever the worker's device is lost (not for releaseDevice()). */
  onDeviceLost(onLost: (message: string) => void): Promise<void> {
    return this.call(this.remote.onDeviceLost(Comlink.proxy(onLost)));
  }

  /** Test hook: the worker destroys its device now; honoured only with testHooks. */
  debugLoseDevice(): Promise<void> {
    return this.call(this.remote.__debugLoseDevice());
  }

  /** Asks the worker to destroy its device (before terminate()); a stuck worker never answers. */
  releaseDevice(): Promise<void> {
    return this.call(this.remote.releaseDevice());
  }

  /** Kills the worker at once (a stalled GPU call included); every pending call rejects. */
  terminate(): void {
    if (this.terminated) return;
    this.terminated = true;
    this.fail(new WorkerCrashedError('terminated'));
    this.remote[Comlink.releaseProxy]();
    this.worker.terminate();
  }
}
