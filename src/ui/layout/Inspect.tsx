// What the model does: the selection stepper over the worker's training snapshots, and the
// generation panel, whose clicked token points the stepper at the decode snapshots of that
// generation. Both are remounted for every run (epoch), so nothing from an earlier run lingers.
import { useCallback, useMemo, useState } from 'react';

import { cancelGeneration, generate, loadSnapshot } from '../controller';
import {
  type GenerationDone,
  type GenerationModel,
  GenerationPanel,
  type GenerationRequest,
  type GenerationSink,
  type TokenSelection,
} from '../generate';
import { useDecode } from '../run/use-decode';
import { SelectionStepper } from '../stepper';
import { WindowRange } from '../stepper/WindowRange';
import { useStore } from '../store';
import { DenseRunNote } from './DenseRunNote';

/** Milliseconds between generated tokens: a tiny model decodes faster than one can read. */
const TOKEN_DELAY_MS = 40;

export function Inspect() {
  const epoch = useStore((s) => s.epoch);
  return <RunViews key={epoch} />;
}

function RunViews() {
  const steps = useStore((s) => s.snapshotSteps);
  const runConfig = useStore((s) => s.runConfig);
  const info = useStore((s) => s.runInfo);
  const status = useStore((s) => s.status);
  const stepsDone = useStore((s) => s.stepsDone);
  const decode = useDecode(info?.dataset.tokenizer ?? null);
  const [picked, setPicked] = useState<TokenSelection | null>(null);
  // A new loader per run (RunViews is remounted for each): the stepper's cache is keyed on it.
  const load = useCallback((step: number, layer: number, group: number) => loadSnapshot(step, layer, group), []);

  const model = useMemo((): GenerationModel | null => {
    if (!runConfig || !info || status === 'starting' || status === 'error') return null;
    const m = runConfig.model;
    return {
      nsa: m.attention === 'nsa' && m.nsa ? m.nsa : null,
      // DSA: the token details list the tokens each layer's indexer picked (docs/dsa-spec.md section 7).
      dsa: m.attention === 'dsa' && m.dsa ? m.dsa : null,
      H: m.nHeads,
      G: m.nKvGroups,
      layers: m.nLayers,
      contextLength: m.seqLen,
      vocabSize: Math.min(m.vocabSize, info.dataset.vocabSize),
      step: stepsDone,
    };
  }, [runConfig, info, status, stepsDone]);

  const onGenerate = useCallback(async (req: GenerationRequest, sink: GenerationSink): Promise<GenerationDone> => {
    const r = await generate({ ...req, tokenDelayMs: TOKEN_DELAY_MS }, sink.start, sink.tokens);
    return { stop: r.stop };
  }, []);

  const vocab = info?.dataset.vocabSize ?? 0;
  const task = runConfig?.data.source === 'recall' ? runConfig.data.recall : undefined;
  const passkeyTask = runConfig?.data.source === 'passkey' ? runConfig.data.passkey : undefined;
  const seqLen = runConfig?.model.seqLen ?? 0;
  const recall = useMemo(() => (task ? { task, seqLen } : undefined), [task, seqLen]);
  const passkey = useMemo(() => (passkeyTask ? { task: passkeyTask, seqLen } : undefined), [passkeyTask, seqLen]);
  return (
    <>
      <SelectionStepper
        steps={steps}
        layers={runConfig?.model.nLayers ?? 0}
        groups={runConfig?.model.nKvGroups ?? 0}
        load={load}
        decode={decode}
        snapshots={picked?.snapshots}
        focus={picked?.focus ?? null}
        emptyNote={
          runConfig?.model.attention === 'dense' ? (
            <DenseRunNote />
          ) : runConfig?.model.attention === 'window' && runConfig.model.window ? (
            <WindowRange window={runConfig.model.window} T={runConfig.model.seqLen} />
          ) : undefined
        }
        recall={recall}
        passkey={passkey}
      />
      <GenerationPanel
        onGenerate={onGenerate}
        onCancel={() => void cancelGeneration()}
        model={model}
        disabledReason={
          status === 'starting'
            ? 'The model is being built…'
            : 'Train (or Step) a model first: generation samples from its current weights.'
        }
        promptHint={
          info && info.dataset.tokenizer === null
            ? `This dataset has no tokenizer: type token ids 0 to ${vocab - 1} separated by spaces.`
            : undefined
        }
        onSelectToken={setPicked}
      />
    </>
  );
}
