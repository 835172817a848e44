// The page's handle on the trainer worker: creates the module worker, wraps it with comlink, and
// turns a worker that fails to load or crashes into rejected calls instead of silent hangs.
import * as Comlink from 'comlink';
import type { RunConfig } from '../train/config';
import type { AdapterProbe, InitInfo, TrainResult, TrainUpdate } from './protocol';
import type { TrainerWorkerApi } from './trainer-worker';

export class WorkerCrashedError extends Error {}

export class TrainerClient {
  private readonly worker: Worker;
  private readonly remote: Comlink.Remote<TrainerWorkerApi>;
  private readonly crashed: Promise<never>;

  constructor() {
    this.worker = new Worker(new URL('./trainer-worker.ts', import.meta.url), { type: 'module', name: 'nsa-trainer' });
    this.remote = Comlink.wrap<TrainerWorkerApi>(this.worker);
    this.crashed = new Promise<never>((_, reject) => {
      this.worker.addEventListener('error', (ev) => {
        ev.preventDefault();
        reject(new WorkerCrashedError(`The trainer worker failed: ${ev.message || 'it could not be loaded or threw at top level'}`));
      });
    });
    this.crashed.catch(() => {});
  }

  private call<T>(p: Promise<T>): Promise<T> {
    return Promise.race([p, this.crashed]);
  }

  getAdapter(): Promise<AdapterProbe> {
    return this.call<AdapterProbe>(this.remote.getAdapter());
  }

  /** Starts a new run; data/brown.txt is fetched relative to this page. */
  init(config: RunConfig, pageUrl: string = document.baseURI): Promise<InitInfo> {
    return this.call(this.remote.init(config, pageUrl));
  }

  train(steps: number, onUpdate: (u: TrainUpdate) => void): Promise<TrainResult> {
    return this.call(this.remote.train(steps, Comlink.proxy(onUpdate)));
  }

  pause(): Promise<void> {
    return this.call(this.remote.pause());
  }

  stop(): Promise<void> {
    return this.call(this.remote.stop());
  }

  terminate(): void {
    this.remote[Comlink.releaseProxy]();
    this.worker.terminate();
  }
}
