// Node: builds the dataset a run config asks for (Brown from node_modules, an uploaded file, or
// the synthetic tasks, associative recall from data.recall, passkey retrieval from data.passkey).
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';

import type { RunConfig } from '../train/config';
import { loadBrownText } from '../train/data/brown-node';
import { createDataset, type Dataset } from '../train/data/datasets';
import { passkeyDatasetForRun } from '../train/data/passkey';
import { recallDatasetForRun } from '../train/data/recall';
import { withShortSeq } from '../train/data/short-seq';
import { checkTextFileSize, DataFileError, decodeTextFile } from '../train/data/text-file';

export function datasetForRun(config: RunConfig, uploadPath?: string): Dataset {
  // With a sequence-length warm-up: the same source at both lengths (src/train/data/short-seq.ts).
  return withShortSeq(config, (c) => datasetAtLength(c, uploadPath));
}

function datasetAtLength(cfg: RunConfig, uploadPath?: string): Dataset {
  const opts = { batchSize: cfg.train.batchSize, seqLen: cfg.model.seqLen, seed: cfg.train.seed };
  switch (cfg.data.source) {
    case 'brown':
      return createDataset({ kind: 'text', name: 'brown', text: loadBrownText(), tokenizer: cfg.data.tokenizer }, opts);
    case 'upload': {
      if (!uploadPath) throw new Error("data.source 'upload' needs a file: --data file:<path>");
      const text = readTextFile(uploadPath);
      return createDataset({ kind: 'text', name: basename(uploadPath), text, tokenizer: cfg.data.tokenizer }, opts);
    }
    case 'random':
      return createDataset({ kind: 'random', vocabSize: cfg.model.vocabSize }, opts);
    case 'copy':
      return createDataset({ kind: 'copy', vocabSize: cfg.model.vocabSize }, opts);
    case 'recall':
      return recallDatasetForRun(cfg);
    case 'passkey':
      return passkeyDatasetForRun(cfg);
  }
}

/**
 * A UTF-8 text file's contents. Refused, naming the path, before it is read: a missing or
 * unreadable path, a directory or other non-file, a file over MAX_TEXT_FILE_BYTES; after: binary
 * or invalid UTF-8 (src/train/data/text-file.ts). `limit` is for tests.
 */
export function readTextFile(path: string, limit?: number): string {
  const fail = (why: string, e?: unknown): never => {
    throw new DataFileError(path, why, e === undefined ? undefined : { cause: e });
  };
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (e) {
    return fail(`cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, e);
  }
  if (st.isDirectory()) fail('is a directory; give a text file (--data file:<path to a .txt file>)');
  if (!st.isFile()) fail('is not a regular file');
  checkTextFileSize(path, st.size, limit);
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    return fail(`cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, e);
  }
  return decodeTextFile(bytes, path);
}
