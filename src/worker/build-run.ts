// Builds a run's dataset and trainer. Imported lazily by the worker, so probing the adapter does
// not wait for the model code and tokenizers to load.
import type { GpuContext } from '../gpu/context';
import type { RunConfig } from '../train/config';
import { createDataset } from '../train/datasets';
import { Trainer } from '../train/trainer';
import type { Heartbeat } from '../train/types';

export function buildRun(gpu: GpuContext, config: RunConfig, text: string, onHeartbeat: (b: Heartbeat) => void): Promise<Trainer> {
  const t = config.train;
  const dataset = createDataset(
    { kind: 'text', name: 'brown', text, tokenizer: config.data.tokenizer },
    { batchSize: t.batchSize, seqLen: config.model.seqLen, seed: t.seed },
  );
  return Trainer.create(gpu, config, dataset, { onHeartbeat });
}
