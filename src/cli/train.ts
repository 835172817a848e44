// npm run train -- --preset tiny --data brown --steps 300
// npm run train -- --resume runs/<run>
// Trains in Node on Dawn; writes runs/<run>/{heartbeat.jsonl,metrics.csv,checkpoint.safetensors,
// config.json,summary.json}. The checkpoint (parameters, AdamW moments, step, data cursor, config,
// metrics) is written atomically every --checkpoint-every steps, on SIGINT/SIGTERM and at the end,
// where it holds the final weights (a non-finite stop leaves the last good one untouched):
// it is the one weight format generate, export, compare and --resume read. --resume continues a run
// from it, bit for bit as if it had never stopped. A stall exits; the last checkpoint stands.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { formatConfigIssues } from '../definitions/config-issue';
import { countParams } from '../definitions/params';
import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { decodeCheckpoint, NonFiniteTensorError, type TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import { type AtomicWriteHooks, CHECKPOINT_FILE, RUN_SOURCE_FILE, RunFolder } from '../train/checkpoint/run-files';
import { type RunConfig, validateRunConfig } from '../train/config';
import type { Dataset } from '../train/data/datasets';
import { DivergenceError } from '../train/divergence';
import { taskChance } from '../train/eval/task-chance';
import { evaluateRun } from '../train/eval/task-eval';
import { trainingLoop } from '../train/loop';
import { csvRows } from '../train/metrics-csv';
import { checkEvalSupply, checkRunResources } from '../train/resources';
import { NonFiniteError, resumeCursorIssues, Trainer } from '../train/trainer';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import { intFlag, parseArgs, type ParsedArgs, positiveFlag } from './args';
import { datasetForRun } from './data-node';
import { guardWrite, runOnDisk, withDiskErrors } from './disk-errors';
import { fromExportRun } from './export-dir';
import { runMain } from './main';
import { nodeResourceLimits } from './resources-node';
import { runConfigFromArgs, TRAIN_ARGS, USAGE } from './run-config';
import { lockRunFolder, notReusable, prepareNewRunFolder, runFolderPath } from './run-folder-guard';
import { removeOwnInterruptedWrites } from './run-lock';
import { StallWatchdog } from './stall-watchdog';
import { escapeControl } from './terminal-text';
import { UsageError } from './usage';

const DEFAULT_CHECKPOINT_EVERY = 100;
/** --stall-timeout's default: seconds without a heartbeat before the watchdog gives up. */
const DEFAULT_STALL_SECONDS = 300;
/** Flags a resumed run accepts: the rest of its configuration is the checkpoint's. */
const RESUME_FLAGS = ['resume', 'stall-timeout', 'checkpoint-every', 'help'];
/** Test hook: SIGKILL this process after writing the N-th checkpoint's temporary file, before the rename. */
const CRASH_HOOK = 'NSA_TEST_KILL_DURING_CHECKPOINT';
// A test hook: SIGTERM to itself right after the GPU is acquired, so that the signal is caught but not
// yet dispatched when start-up goes on: the moment a signal sent during Dawn's blocking start-up lands in.
const SIGNAL_HOOK = 'NSA_TEST_SIGTERM_AFTER_GPU';
/** Test hook: after step N's metrics, fill the embedding with NaN (a later step's loss is NaN: a non-finite stop). */
const NAN_HOOK = 'NSA_TEST_NAN_WEIGHT_AFTER_STEP';

function fmt(x: number, d = 4): string {
  return Number.isFinite(x) ? x.toFixed(d) : String(x);
}

interface RunStart {
  config: RunConfig;
  /** The run folder, opened (created, or reset to the checkpoint's rows) once the run is known to fit the adapter. */
  dir: string;
  openFolder: () => RunFolder;
  dataset: Dataset;
  /** The checkpoint to continue from (--resume). */
  from?: TrainingCheckpoint;
}

/** A new run: config from the flags, a new folder (refused if it exists), the dataset. */
function newRun(args: ParsedArgs): RunStart | number {
  const { config, uploadPath } = runConfigFromArgs(args);
  // Everything is checked before any GPU work and before any file is touched: the fields, then
  // what no adapter could hold (the adapter's own limits are checked once it is known).
  const errs = validateRunConfig(config);
  if (!errs.length) errs.push(...checkRunResources(config));
  if (errs.length) {
    console.error(`invalid configuration:\n${formatConfigIssues(errs)}`);
    return 2;
  }
  const runName =
    args.flags.get('run') ??
    `${args.flags.get('preset') ?? 'tiny'}-${config.data.source}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const dir = runFolderPath(args.flags.get('out') ?? 'runs', runName);
  // One writer per folder: locked here, before any GPU work (a folder stopped before its first checkpoint is reused).
  const target = prepareNewRunFolder(dir, runName);
  const dataset = datasetForRun(config, uploadPath);
  const supply = checkEvalSupply(config, dataset);
  if (supply.length) {
    console.error(`invalid configuration:\n${formatConfigIssues(supply)}`);
    return 2;
  }
  const openFolder = () => {
    const folder = target.open();
    folder.writeJson(RUN_SOURCE_FILE, { uploadPath: uploadPath ?? null });
    return folder;
  };
  return { config, dir, openFolder, dataset };
}

/** --resume DIR: the lock, the checkpoint's config, the data stream at its cursor, metrics.csv back to its rows. */
function resumedRun(args: ParsedArgs, dir: string): RunStart | number {
  const extra = [...args.flags.keys()].filter((k) => !RESUME_FLAGS.includes(k));
  if (extra.length || args.sets.length)
    throw new UsageError(
      `--resume continues ${dir} with the configuration in its checkpoint; drop ${[...extra.map((f) => `--${f}`), ...(args.sets.length ? ['--set'] : [])].join(', ')}`,
      { flag: extra[0] ?? 'set' },
    );
  const file = join(dir, CHECKPOINT_FILE);
  // One writer per folder: refused here, naming the holder, before any GPU work.
  if (existsSync(dir) && statSync(dir).isDirectory()) {
    lockRunFolder(dir, 'train --resume');
    if (!existsSync(file) && notReusable(dir) === null)
      throw new UsageError(
        `--resume: ${dir} has no ${CHECKPOINT_FILE}: it was stopped before its first checkpoint, so there is nothing to resume; start it again with the same flags (the folder is reused)`,
        { flag: 'resume', value: dir },
      );
  }
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new UsageError(`--resume: cannot read ${file} (${(e as Error).message})`, { flag: 'resume', value: dir });
  }
  const from = decodeCheckpoint(bytes, { file });
  const cursor = resumeCursorIssues(from.config, from.state);
  if (cursor.length) {
    console.error(`invalid checkpoint ${file}:\n${formatConfigIssues(cursor)}`);
    return 2;
  }
  let uploadPath: string | undefined;
  try {
    uploadPath = (JSON.parse(readFileSync(join(dir, RUN_SOURCE_FILE), 'utf8')) as { uploadPath: string | null }).uploadPath ?? undefined;
  } catch {
    uploadPath = undefined; // runs without an uploaded text need nothing more
  }
  const dataset = datasetForRun(from.config, uploadPath);
  const openFolder = () => RunFolder.resume(dir, csvRows(from.metrics, from.evals));
  return { config: from.config, dir, openFolder, dataset, from };
}

async function main(): Promise<number> {
  // One listener per signal for the whole process. Swapping listeners would remove a signal's last
  // one, which closes its handle, and a signal caught but not yet dispatched is then lost: a SIGTERM
  // during start-up let the whole run go on (tests/cli/run-folder.integration.test.ts, "SIGTERM during start-up").
  process.on('SIGINT', onStopSignal);
  process.on('SIGTERM', onStopSignal);
  const args = parseArgs(process.argv.slice(2), TRAIN_ARGS);
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  // The run's own flags are read before anything is touched.
  const stallSeconds = positiveFlag(args, 'stall-timeout', 'seconds') ?? DEFAULT_STALL_SECONDS;
  const checkpointEvery = intFlag(args, 'checkpoint-every') ?? DEFAULT_CHECKPOINT_EVERY;
  if (checkpointEvery < 0)
    throw new UsageError(`--checkpoint-every must be ≥ 0 (0: only on stops and at the end)`, { flag: 'checkpoint-every' });
  const resumeDir = args.flags.get('resume');
  const exportDir = args.flags.get('from-export');
  const start =
    resumeDir !== undefined ? resumedRun(args, resumeDir) : exportDir !== undefined ? fromExportRun(args, exportDir) : newRun(args);
  if (typeof start === 'number') return start;
  const { config, dataset, from } = start;
  console.log(
    `[data] ${escapeControl(dataset.name)}: ${dataset.trainTokens} train / ${dataset.valTokens} val tokens, vocab ${dataset.vocabSize}, unigram entropy ${fmt(dataset.unigramEntropy())} nats`,
  );
  console.log(
    escapeControl(`[run] ${start.dir}${from ? ` (resumed at step ${from.state.stepsDone}, checkpoint of ${from.savedAt})` : ''}`),
  );

  const gpu = await acquireNodeGpu({ announce: false });
  console.log(`[gpu] ${describeAdapter(gpu.adapter)}`);
  if (process.env[SIGNAL_HOOK] === '1') process.kill(process.pid, 'SIGTERM');
  // The adapter's own limits, before anything is allocated on it or written to the run folder.
  const tooLarge = checkRunResources(config, nodeResourceLimits(gpu.adapter));
  if (tooLarge.length) {
    console.error(`configuration too large for ${describeAdapter(gpu.adapter)}:\n${formatConfigIssues(tooLarge)}`);
    gpu.destroy();
    return 2;
  }
  if (stopSignal) {
    gpu.destroy();
    console.error(startupStop(stopSignal, start.dir, from?.state.stepsDone ?? null));
    return stopSignal === 'SIGINT' ? 130 : 143;
  }
  const folder = guardWrite(start.dir, 'the run folder', () => start.openFolder());
  Object.assign(runOnDisk, { dir: folder.dir, checkpointPath: folder.checkpointPath, step: from?.state.stepsDone ?? null });
  let lastBeat: Heartbeat | null = null;
  let fatal: string | null = null;
  let trainer: Trainer | null = null;
  gpu.onReport((r) => {
    fatal ??= `[gpu] ${r.kind}: ${r.message}`;
  });
  // Watchdog (src/cli/stall-watchdog.ts): a step that never finishes, or a main thread blocked in a
  // synchronous call, is reported with the phase it was in, never a silent hang. The GPU cannot be
  // read then, so the last checkpoint (at most one interval old) is what stands.
  const watchdog = new StallWatchdog({
    seconds: stallSeconds,
    heartbeatFile: folder.heartbeatPath,
    template: `STALL: no heartbeat for {age} s (phase '{phase}', step {step}); giving up. If steps are this slow on this adapter, raise --stall-timeout (now ${stallSeconds} s). The last checkpoint stands: npm run train -- --resume ${folder.dir}`,
    onStall: (msg) => {
      console.error(msg);
      folder.heartbeat({ ...(lastBeat ?? emptyBeat()), ts: Date.now(), iso: new Date().toISOString(), msg, phase: 'error' });
      process.exit(3);
    },
  });
  const onHeartbeat = (b: Heartbeat) => {
    lastBeat = b;
    watchdog.beat(b.phase, b.step);
    guardWrite(folder.heartbeatPath, `heartbeat of step ${b.step}`, () => folder.heartbeat(b));
  };
  // From here the first SIGINT/SIGTERM ends the loop after the step in flight and writes a checkpoint; a second exits at once.
  stopPhase = 'run';

  trainer = from
    ? await Trainer.fromCheckpoint(gpu, from, dataset, { onHeartbeat })
    : await Trainer.create(gpu, config, dataset, { onHeartbeat });
  const m = config.model;
  console.log(
    `[model] ${countParams(m).toLocaleString('en-US')} parameters, ${m.nLayers} layers, dim ${m.dim}, ${m.nHeads} heads / ${m.nKvGroups} groups, seq ${m.seqLen}, attention ${m.attention}; ` +
      `${(trainer.gpuBytes / 2 ** 20).toFixed(1)} MiB GPU`,
  );
  const t = config.train;
  const metrics: StepMetrics[] = [...(from?.metrics ?? [])];
  const evals: EvalMetrics[] = [...(from?.evals ?? [])];
  let checkpointsWritten = 0;
  // The step the checkpoint in the folder holds (a resumed run's, until the next write); null: none written yet.
  let checkpointStep: number | null = resumeDir !== undefined && from ? from.state.stepsDone : null;
  const crashAt = Number(process.env[CRASH_HOOK] ?? 0);
  /** What a stop that writes nothing leaves behind. */
  const lastGood = () =>
    checkpointStep === null
      ? `No checkpoint was written before the stop (the first is due after ${checkpointEvery > 0 ? `${checkpointEvery} steps` : 'the last step'}); nothing to resume.`
      : `The last good checkpoint is untouched: ${folder.checkpointPath} holds the run after ${checkpointStep} steps (npm run train -- --resume ${folder.dir} continues from there).`;
  const checkpoint = async (reason: string) => {
    const c0 = performance.now();
    // NonFiniteTensorError (a parameter or moment holds NaN/±Inf): nothing is written, the last good checkpoint stands.
    const bytes = await trainer!.checkpoint({ metrics, evals, reason, file: folder.checkpointPath });
    const hooks: AtomicWriteHooks = {};
    if (++checkpointsWritten === crashAt) hooks.beforeRename = () => process.kill(process.pid, 'SIGKILL');
    guardWrite(folder.checkpointPath, `checkpoint at step ${trainer!.stepsDone} (${reason})`, () => folder.writeCheckpoint(bytes, hooks));
    runOnDisk.step = trainer!.stepsDone;
    checkpointStep = trainer!.stepsDone;
    console.log(
      `[checkpoint] step ${trainer!.stepsDone} (${reason}): ${(bytes.byteLength / 2 ** 20).toFixed(2)} MiB in ${(performance.now() - c0).toFixed(0)} ms`,
    );
  };
  const t0 = performance.now();
  const startStep = trainer.stepsDone;
  const logStep = (s: StepMetrics) => {
    metrics.push(s);
    guardWrite(folder.metricsPath, `metrics.csv row of step ${s.step}`, () => folder.metrics(s));
    if (s.step % t.logEvery === 0 || s.step === t.steps - 1)
      console.log(
        `step ${String(s.step).padStart(5)} | loss ${fmt(s.loss)} | lr ${s.lr.toExponential(2)} | ${fmt(s.tokensPerSecond, 0)} tok/s | grad norm ${fmt(s.gradNorm)} | ${fmt(s.stepMs, 1)} ms` +
          (s.nsa ? ` | gates cmp/sel/win ${s.nsa.gateMean.map((g) => g.toFixed(3)).join('/')} | invalid sel ${s.nsa.invalid}` : ''),
      );
  };
  const evaluate = async () => {
    const e = await evaluateRun(trainer!, config);
    evals.push(e);
    guardWrite(folder.metricsPath, `metrics.csv row of the eval at step ${e.step}`, () => folder.metrics(null, e));
    const chance = taskChance(config);
    console.log(
      `eval  ${String(e.step).padStart(5)} | val loss ${fmt(e.valLoss)}` +
        (e.accuracy === undefined
          ? ''
          : ` | answer accuracy ${(100 * e.accuracy).toFixed(1)}% (chance ${(100 * (chance ?? 0)).toFixed(1)}%)`) +
        (e.needleSelected === undefined ? '' : ` | needle selected ${(100 * e.needleSelected).toFixed(1)}%`),
    );
  };
  const hasVal = dataset.valTokens > 0;
  const evalDue = (n: number) => hasVal && t.evalEvery > 0 && n % t.evalEvery === 0 && n < t.steps;
  const checkpointDue = (n: number) => checkpointEvery > 0 && n % checkpointEvery === 0 && n < t.steps;
  const loop = trainingLoop(trainer, {
    until: t.steps,
    checkpointAfter: (n) => evalDue(n) || checkpointDue(n),
    shouldStop: () => fatal !== null || stopSignal !== null,
  });
  // Every early exit below drains the steps in flight and destroys the device first: a process
  // that exits with GPU work queued or a staging buffer mapped can crash in Dawn's teardown
  // (a segfault instead of the exit code).
  const release = async (code: number): Promise<number> => {
    while (trainer.stepsInFlight > 0) await trainer.flush().catch(() => []);
    trainer.destroy();
    gpu.destroy();
    return code;
  };
  try {
    for await (const e of loop) {
      if (e.kind === 'step') {
        logStep(e.metrics);
        if (String(e.metrics.step) === process.env[NAN_HOOK]) {
          const p = await trainer.readParams();
          p.get('wte')!.fill(NaN);
          trainer.trainPlan.importParams(p);
        }
      } else {
        if (evalDue(e.stepsDone)) await evaluate();
        if (checkpointDue(e.stepsDone)) await checkpoint('interval');
      }
    }
  } catch (e) {
    // Non-finite: the state that produced it may hold NaN (a NaN weight gives a NaN loss, and the
    // skipped update leaves it there), so nothing is written: the last good checkpoint stands.
    if (e instanceof NonFiniteError || e instanceof NonFiniteTensorError) {
      console.error(`${e.message}\n${lastGood()}`);
      return release(4);
    }
    if (!(e instanceof DivergenceError)) throw e;
    // Diverged: the weights are finite but the loss stayed far too high. The run failed; keep its state.
    console.error(e.message);
    while (trainer.stepsInFlight > 0) await trainer.flush().catch(() => []);
    try {
      await checkpoint('diverged');
    } catch (w) {
      if (!(w instanceof NonFiniteTensorError)) throw w;
      console.error(`${w.message}\n${lastGood()}`);
      return release(4);
    }
    console.error(`checkpoint of the diverged weights written to ${folder.checkpointPath}`);
    return release(4);
  }
  if (fatal) {
    console.error(`${fatal}\nThe last checkpoint stands: npm run train -- --resume ${folder.dir}`);
    return release(4);
  }
  // A final or signal checkpoint refused for a non-finite tensor: the last good one stands.
  const refused = (w: unknown): number => {
    if (!(w instanceof NonFiniteTensorError)) throw w;
    console.error(`${w.message}\n${lastGood()}`);
    return 4;
  };
  if (stopSignal && trainer.stepsDone === startStep) {
    console.error(startupStop(stopSignal, folder.dir, from?.state.stepsDone ?? null));
    return release(stopSignal === 'SIGINT' ? 130 : 143);
  }
  if (stopSignal) {
    try {
      await checkpoint('signal');
    } catch (w) {
      return release(refused(w));
    }
    console.error(`stopped by ${stopSignal} after step ${trainer.stepsDone - 1}; continue with: npm run train -- --resume ${folder.dir}`);
    return release(stopSignal === 'SIGINT' ? 130 : 143);
  }
  if (hasVal && t.evalBatches > 0) await evaluate();
  try {
    await checkpoint('final');
  } catch (w) {
    return release(refused(w));
  }
  const seconds = (performance.now() - t0) / 1000;
  // The run's config as JSON (the page imports it); the final weights are in the checkpoint.
  guardWrite(join(folder.dir, 'config.json'), 'the final config', () =>
    folder.writeJson('config.json', { ...config, stepsDone: trainer.stepsDone }),
  );
  const last = metrics.at(-1);
  const summary = {
    run: folder.dir.split('/').pop(),
    dir: folder.dir,
    adapter: describeAdapter(gpu.adapter),
    steps: trainer.stepsDone,
    resumed_from: from?.state.stepsDone ?? null,
    final_loss: last?.loss ?? null,
    val_loss: evals.at(-1)?.valLoss ?? null,
    unigram_entropy: dataset.unigramEntropy(),
    seconds,
    tokens_per_s: ((trainer.stepsDone - startStep) * trainer.tokensPerStep) / seconds,
  };
  guardWrite(join(folder.dir, 'summary.json'), 'the run summary', () => folder.writeJson('summary.json', summary));
  console.log(JSON.stringify(summary));
  trainer.destroy();
  gpu.destroy();
  return 0;
}

/** The first SIGINT/SIGTERM received, and whether it came in start-up or once the run's folder was open. */
let stopSignal: NodeJS.Signals | null = null;
let stopPhase: 'start-up' | 'run' = 'start-up';

/** The first signal stops at the next safe point (the end of start-up, or after the step in flight); a second exits at once. */
function onStopSignal(sig: NodeJS.Signals): void {
  if (stopSignal) process.exit(sig === 'SIGINT' ? 130 : 143);
  stopSignal = sig;
  console.error(
    stopPhase === 'start-up'
      ? `[${sig}] stopping at the end of start-up, before the first step (again to exit at once)`
      : `[${sig}] stopping after the step in flight and writing a checkpoint (again to exit at once)`,
  );
}

/** A stop before the first step of this process: nothing was trained, so no checkpoint is written. */
function startupStop(sig: NodeJS.Signals, dir: string, resumedAt: number | null): string {
  return (
    `stopped by ${sig} during start-up, before any step ran: nothing written. ` +
    (resumedAt === null
      ? `${dir} holds no checkpoint; the same command starts the run again (the folder is reused).`
      : `${dir}'s checkpoint at step ${resumedAt} stands: npm run train -- --resume ${dir}`)
  );
}

function emptyBeat(): Heartbeat {
  return { ts: 0, iso: '', step: 0, msg: '', phase: 'init', loss: null, toks_per_s: null, lr: null, grad_norm: null, gpu_mem_bytes: 0 };
}

runMain(() => withDiskErrors(main, removeOwnInterruptedWrites), { stack: false });
