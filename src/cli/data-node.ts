// Node: builds the dataset a run config asks for (Brown from node_modules, an uploaded file, or
// the synthetic tasks, associative recall from data.recall).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

import { loadBrownText } from '../train/brown-node';
import type { RunConfig } from '../train/config';
import { recallDatasetForRun } from '../train/data/recall';
import { createDataset, type Dataset } from '../train/datasets';

export function datasetForRun(cfg: RunConfig, uploadPath?: string): Dataset {
  const opts = { batchSize: cfg.train.batchSize, seqLen: cfg.model.seqLen, seed: cfg.train.seed };
  switch (cfg.data.source) {
    case 'brown':
      return createDataset({ kind: 'text', name: 'brown', text: loadBrownText(), tokenizer: cfg.data.tokenizer }, opts);
    case 'upload': {
      if (!uploadPath) throw new Error("data.source 'upload' needs a file: --data file:<path>");
      const text = readFileSync(uploadPath, 'utf8');
      return createDataset({ kind: 'text', name: basename(uploadPath), text, tokenizer: cfg.data.tokenizer }, opts);
    }
    case 'random':
      return createDataset({ kind: 'random', vocabSize: cfg.model.vocabSize }, opts);
    case 'copy':
      return createDataset({ kind: 'copy', vocabSize: cfg.model.vocabSize }, opts);
    case 'recall':
      return recallDatasetForRun(cfg);
  }
}
