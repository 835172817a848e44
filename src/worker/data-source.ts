// Builds the dataset a run asks for inside the worker: the Brown corpus (fetched next to the page),
// the text of an uploaded file, or a synthetic task (random tokens, copy, associative recall, passkey).
import type { RunConfig } from '../train/config';
import { createDataset, type Dataset } from '../train/data/datasets';
import { passkeyDatasetForRun } from '../train/data/passkey';
import { recallDatasetForRun } from '../train/data/recall';
import { withShortSeq } from '../train/data/short-seq';
import type { DatasetInfo, DataSpec } from './protocol';

/** Which config.data.source each data kind trains under. */
const SOURCE_OF: Record<DataSpec['kind'], RunConfig['data']['source']> = {
  brown: 'brown',
  upload: 'upload',
  random: 'random',
  copy: 'copy',
  recall: 'recall',
  passkey: 'passkey',
};

/** Why `data` cannot feed `config`, or null. */
export function dataMismatch(config: RunConfig, data: DataSpec): string | null {
  const want = SOURCE_OF[data.kind];
  if (config.data.source !== want) return `the data is '${data.kind}' but config.data.source is '${config.data.source}'`;
  if (data.kind === 'upload' && data.text.length === 0) return `the uploaded file '${data.name}' is empty`;
  if (data.kind === 'recall' && !config.data.recall) return 'config.data.recall (the recall task) is missing';
  if (data.kind === 'passkey' && !config.data.passkey) return 'config.data.passkey (the passkey task) is missing';
  return null;
}

/** `brownText` fetches the corpus (only called for Brown runs). */
export async function buildDataset(config: RunConfig, data: DataSpec, brownText: () => Promise<string>): Promise<Dataset> {
  const why = dataMismatch(config, data);
  if (why) throw new Error(`Cannot build the dataset: ${why}.`);
  const text = data.kind === 'brown' ? await brownText() : '';
  // With a sequence-length warm-up: the same source at both lengths (src/train/data/short-seq.ts).
  return withShortSeq(config, (c) => datasetAtLength(c, data, text));
}

function datasetAtLength(config: RunConfig, data: DataSpec, brownText: string): Dataset {
  const opts = { batchSize: config.train.batchSize, seqLen: config.model.seqLen, seed: config.train.seed };
  const tokenizer = config.data.tokenizer;
  switch (data.kind) {
    case 'brown':
      return createDataset({ kind: 'text', name: 'brown', text: brownText, tokenizer }, opts);
    case 'upload':
      return createDataset({ kind: 'text', name: data.name, text: data.text, tokenizer }, opts);
    case 'random':
      return createDataset({ kind: 'random', vocabSize: config.model.vocabSize }, opts);
    case 'copy':
      return createDataset({ kind: 'copy', vocabSize: config.model.vocabSize }, opts);
    case 'recall':
      return recallDatasetForRun(config);
    case 'passkey':
      return passkeyDatasetForRun(config);
  }
}

export function describeDataset(d: Dataset): DatasetInfo {
  const finite = (n: number) => (Number.isFinite(n) ? n : null);
  return {
    name: d.name,
    vocabSize: d.vocabSize,
    tokenizer: d.tokenizer?.name ?? null,
    trainTokens: finite(d.trainTokens),
    valTokens: finite(d.valTokens),
    unigramEntropy: d.unigramEntropy(),
  };
}
