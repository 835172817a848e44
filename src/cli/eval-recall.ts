// npm run eval:recall [-- --modes nsa,win --steps 1500 --seed 1 --eval-batches 8 --set task.pairs=8 --set model.nsa.w=8]
// npm run eval:recall -- --task passkey [--set task.keyLength=6 --set task.maxDepth=0.5 …]
// Trains the task's preset (recall, or passkey) once per mode from the same seed (nsa = NSA with
// learned gates; win, cmp, sel = NSA forced to that branch; nosel = NSA without the selected
// branch; dense = dense attention) and scores held-out answers: recall queries, or passkey digits
// (accuracy per digit, chance 1/digits; key_accuracy: whole keys, chance digits^−keyLength).
// Prints JSON lines: the adapter, the task, training progress, one result per mode, a summary.
import { formatConfigIssues } from '../definitions/config-issue';
import { describeAdapter } from '../gpu/context';
import { acquireNodeGpu } from '../gpu/node-device';
import { validateRunConfig } from '../train/config';
import { passkeyVocab } from '../train/data/passkey';
import { recallVocab } from '../train/data/recall';
import { configForMode, RECALL_MODES, type RecallMode, trainAndScoreRecall } from '../train/eval/recall-eval';
import { taskChance, taskKeyChance } from '../train/eval/task-chance';
import { passkeyPreset } from '../train/presets/passkey-preset';
import { recallPreset } from '../train/presets/recall-preset';
import { checkRunResources } from '../train/resources';
import { applySet, intFlag, numFlag, parseArgs } from './args';
import { runMain } from './main';
import { nodeResourceLimits } from './resources-node';
import { UsageError } from './usage';

const TASKS = ['recall', 'passkey'] as const;
type TaskName = (typeof TASKS)[number];

const USAGE = `usage: npm run eval:recall -- [--task ${TASKS.join('|')}] [--modes ${RECALL_MODES.join(',')}] [--steps N] [--seed N]
  [--batch N] [--lr X] [--eval-batches N] [--eval-every N] [--log-every N] [--set model.x=.. | train.x=.. | task.x=..]
  --task picks the preset and its task (default recall); task.x is a field of data.recall or data.passkey.`;

const out = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2), {
    values: ['task', 'modes', 'steps', 'seed', 'batch', 'lr', 'eval-batches', 'eval-every', 'log-every'],
    booleans: ['help'],
    sets: true,
    usage: USAGE,
  });
  if (args.flags.has('help')) {
    console.log(USAGE);
    return 0;
  }
  const taskName = (args.flags.get('task') ?? 'recall') as TaskName;
  if (!TASKS.includes(taskName))
    throw new UsageError(`--task: unknown task '${taskName}' (known: ${TASKS.join(', ')})`, { flag: 'task', value: taskName });
  const run = taskName === 'passkey' ? passkeyPreset() : recallPreset();
  // The task is the run's own data.recall or data.passkey: --set task.x and --set data.<task>.x
  // edit the same object.
  const task = taskName === 'passkey' ? run.data.passkey! : run.data.recall!;
  const vocabOf = () => (taskName === 'passkey' ? passkeyVocab(run.data.passkey!).size : recallVocab(run.data.recall!).size);
  const modes = (args.flags.get('modes') ?? 'nsa,win').split(',').filter(Boolean) as RecallMode[];
  for (const m of modes)
    if (!RECALL_MODES.includes(m))
      throw new UsageError(`--modes: unknown mode '${m}' (known: ${RECALL_MODES.join(', ')})`, { flag: 'modes', value: m });
  const t = run.train;
  t.steps = intFlag(args, 'steps') ?? t.steps;
  t.seed = intFlag(args, 'seed') ?? t.seed;
  t.batchSize = intFlag(args, 'batch') ?? t.batchSize;
  t.lrMax = numFlag(args, 'lr') ?? t.lrMax;
  t.logEvery = intFlag(args, 'log-every') ?? 25;
  const evalBatches = intFlag(args, 'eval-batches') ?? t.evalBatches;
  const evalEvery = intFlag(args, 'eval-every') ?? 0;
  const target = { model: run.model, train: run.train, data: run.data, task };
  for (const [path, value] of args.sets) applySet(target, path, value);
  run.model.vocabSize = Math.max(run.model.vocabSize, vocabOf());
  // Everything is checked before any GPU work.
  const errs = modes.flatMap((m) => {
    const cfg = configForMode(run, m);
    const fieldErrs = validateRunConfig(cfg);
    return fieldErrs.length ? fieldErrs : checkRunResources(cfg);
  });
  if (errs.length) {
    console.error(`invalid configuration:\n${[...new Set(formatConfigIssues(errs).split('\n'))].join('\n')}`);
    return 2;
  }

  const gpu = await acquireNodeGpu({ announce: false });
  const tooLarge = modes.flatMap((m) => checkRunResources(configForMode(run, m), nodeResourceLimits(gpu.adapter)));
  if (tooLarge.length) {
    console.error(
      `configuration too large for ${describeAdapter(gpu.adapter)}:\n${[...new Set(formatConfigIssues(tooLarge).split('\n'))].join('\n')}`,
    );
    gpu.destroy();
    return 2;
  }
  out({ kind: 'adapter', adapter: describeAdapter(gpu.adapter), architecture: gpu.adapter.architecture });
  const nsa = run.model.nsa;
  const chance = taskChance(run)!;
  const keyChance = taskKeyChance(run);
  out({
    kind: 'task',
    task: taskName,
    ...task,
    seqLen: run.model.seqLen,
    vocab: vocabOf(),
    chance,
    ...(keyChance === null ? {} : { key_chance: keyChance }),
    nsa: nsa ? { l: nsa.l, d: nsa.d, lSel: nsa.lSel, nSel: nsa.nSel, w: nsa.w } : null,
  });
  const acc: Partial<Record<RecallMode, number>> = {};
  for (const mode of modes) {
    const cfg = configForMode(run, mode);
    const r = await trainAndScoreRecall(gpu, cfg, {
      evalBatches,
      evalEvery,
      onEval: (step, s) =>
        out({
          kind: 'eval',
          mode,
          step,
          accuracy: s.accuracy,
          ...(keyChance === null ? {} : { key_accuracy: s.sequenceAccuracy }),
          answer_loss: s.answerLoss,
        }),
      onStep: (m) => {
        if (m.step % t.logEvery === 0 || m.step === t.steps - 1)
          out({ kind: 'step', mode, step: m.step, loss: m.loss, grad_norm: m.gradNorm });
      },
    });
    acc[mode] = r.score.accuracy;
    out({
      kind: taskName,
      mode,
      accuracy: r.score.accuracy,
      chance,
      ...(keyChance === null ? {} : { key_accuracy: r.score.sequenceAccuracy, key_chance: keyChance, keys: r.score.sequences }),
      answers: r.score.answers,
      mean_p_correct: r.score.meanPCorrect,
      answer_loss: r.score.answerLoss,
      final_train_loss: r.finalLoss,
      steps: r.steps,
      build_s: r.buildMs / 1000,
      train_s: r.trainMs / 1000,
      ms_per_step: r.trainMs / r.steps,
    });
  }
  out({ kind: 'summary', task: taskName, chance, accuracy: acc });
  gpu.destroy();
  return 0;
}

runMain(main);
