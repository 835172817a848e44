// npm run train -- --preset tiny --data brown --steps 300
// Trains in Node on Dawn; writes runs/<run>/{heartbeat.jsonl,metrics.csv,config.json,weights.*}.
import { join } from 'node:path';

import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { formatConfigIssues } from '../spec/config-issue';
import { countParams, paramSpecs } from '../spec/params';
import { validateRunConfig } from '../train/config';
import { trainingLoop } from '../train/loop';
import { RunFolder, saveCheckpoint } from '../train/run-files';
import { Trainer } from '../train/trainer';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../train/types';
import { numFlag, parseArgs } from './args';
import { datasetForRun } from './data-node';
import { runMain } from './main';
import { runConfigFromArgs, USAGE } from './run-config';

function fmt(x: number, d = 4): string {
  return Number.isFinite(x) ? x.toFixed(d) : String(x);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), ['help']);
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  const { config, uploadPath } = runConfigFromArgs(args);
  // Everything is checked before any GPU work.
  const errs = validateRunConfig(config);
  if (errs.length) {
    console.error(`invalid configuration:\n${formatConfigIssues(errs)}`);
    return 2;
  }
  const stallSeconds = numFlag(args, 'stall-timeout') ?? 300;
  const runName =
    args.flags.get('run') ??
    `${args.flags.get('preset') ?? 'tiny'}-${config.data.source}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const folder = new RunFolder(join(args.flags.get('out') ?? 'runs', runName));
  const dataset = datasetForRun(config, uploadPath);
  console.log(
    `[data] ${dataset.name}: ${dataset.trainTokens} train / ${dataset.valTokens} val tokens, vocab ${dataset.vocabSize}, unigram entropy ${fmt(dataset.unigramEntropy())} nats`,
  );

  const gpu = await acquireNodeGpu({ announce: false });
  console.log(`[gpu] ${describeAdapter(gpu.adapter)}`);
  let lastBeat: Heartbeat | null = null;
  let lastBeatAt = Date.now();
  let fatal: string | null = null;
  let trainer: Trainer | null = null;
  gpu.onReport((r) => {
    fatal ??= `[gpu] ${r.kind}: ${r.message}`;
  });
  const onHeartbeat = (b: Heartbeat) => {
    lastBeat = b;
    lastBeatAt = Date.now();
    folder.heartbeat(b);
  };
  // Watchdog: a step that never finishes is reported with the phase it was in, never a silent hang.
  const watchdog = setInterval(() => {
    const age = (Date.now() - lastBeatAt) / 1000;
    if (age > stallSeconds) {
      const phase = trainer?.currentPhase ?? lastBeat?.phase ?? 'init';
      const msg = `STALL: no heartbeat for ${age.toFixed(0)} s (phase '${phase}', step ${trainer?.stepsDone ?? 0}); giving up`;
      console.error(msg);
      folder.heartbeat({ ...(lastBeat ?? emptyBeat()), ts: Date.now(), iso: new Date().toISOString(), msg, phase: 'error' });
      process.exit(3);
    }
  }, 1000);
  watchdog.unref();

  trainer = await Trainer.create(gpu, config, dataset, { onHeartbeat });
  const m = config.model;
  console.log(
    `[model] ${countParams(m).toLocaleString('en-US')} parameters, ${m.nLayers} layers, dim ${m.dim}, ${m.nHeads} heads / ${m.nKvGroups} groups, seq ${m.seqLen}, attention ${m.attention}; ` +
      `${(trainer.gpuBytes / 2 ** 20).toFixed(1)} MiB GPU`,
  );
  const t = config.train;
  const t0 = performance.now();
  let lastEval: EvalMetrics | null = null;
  const logStep = (s: StepMetrics) => {
    folder.metrics(s);
    if (s.step % t.logEvery === 0 || s.step === t.steps - 1)
      console.log(
        `step ${String(s.step).padStart(5)} | loss ${fmt(s.loss)} | lr ${s.lr.toExponential(2)} | ${fmt(s.tokensPerSecond, 0)} tok/s | grad norm ${fmt(s.gradNorm)} | ${fmt(s.stepMs, 1)} ms` +
          (s.nsa ? ` | gates cmp/sel/win ${s.nsa.gateMean.map((g) => g.toFixed(3)).join('/')} | invalid sel ${s.nsa.invalid}` : ''),
      );
  };
  const evaluate = async () => {
    lastEval = await trainer!.evaluate();
    folder.metrics(null, lastEval);
    console.log(`eval  ${String(lastEval.step).padStart(5)} | val loss ${fmt(lastEval.valLoss)}`);
  };
  const hasVal = dataset.valTokens > 0;
  let last: StepMetrics | null = null;
  const loop = trainingLoop(trainer, {
    until: t.steps,
    checkpointAfter: (n) => hasVal && t.evalEvery > 0 && n % t.evalEvery === 0 && n < t.steps,
    shouldStop: () => fatal !== null,
  });
  for await (const e of loop) {
    if (e.kind === 'step') {
      last = e.metrics;
      logStep(e.metrics);
    } else await evaluate();
  }
  if (fatal) {
    console.error(fatal);
    return 4;
  }
  if (hasVal && t.evalBatches > 0) await evaluate();
  const seconds = (performance.now() - t0) / 1000;
  saveCheckpoint(folder.dir, config, paramSpecs(config.model), await trainer.readParams(), { stepsDone: trainer.stepsDone });
  const summary = {
    run: runName,
    dir: folder.dir,
    adapter: describeAdapter(gpu.adapter),
    steps: trainer.stepsDone,
    final_loss: last?.loss ?? null,
    val_loss: (lastEval as EvalMetrics | null)?.valLoss ?? null,
    unigram_entropy: dataset.unigramEntropy(),
    seconds,
    tokens_per_s: (trainer.stepsDone * trainer.tokensPerStep) / seconds,
  };
  folder.writeJson('summary.json', summary);
  console.log(JSON.stringify(summary));
  trainer.destroy();
  gpu.destroy();
  return 0;
}

function emptyBeat(): Heartbeat {
  return { ts: 0, iso: '', step: 0, msg: '', phase: 'init', loss: null, toks_per_s: null, lr: null, grad_norm: null, gpu_mem_bytes: 0 };
}

runMain(main, { stack: false });
