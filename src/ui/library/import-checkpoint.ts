// A checkpoint file brought into the run library (made by the CLI or another browser, or a PyTorch
// export as a zip: pytorch-zip.ts): decoded and validated in full first (sizes, dtypes, shapes,
// config: CheckpointFormatError names the file and the field), so a broken file is refused before
// anything is stored.
import { decodeCheckpoint } from '../../train/checkpoint/checkpoint';
import { newRunId } from './entry';
import { checkpointFromPytorchZip } from './pytorch-zip';
import type { RunSave } from './run-storage';

/** The file's name without `.safetensors` or `-pytorch.zip` / `.zip` (the new entry's name). */
export function runNameOfFile(file: string): string {
  return file.replace(/(\.safetensors|-pytorch\.zip|\.zip)$/i, '') || file;
}

/** The library save of a checkpoint file; throws CheckpointFormatError for a file that is not one. */
export function importedRun(raw: Uint8Array, file: string, now: Date = new Date()): RunSave {
  const bytes = /\.zip$/i.test(file) ? checkpointFromPytorchZip(raw, file, now) : raw;
  const c = decodeCheckpoint(bytes, { file });
  return {
    id: newRunId(now),
    name: runNameOfFile(file),
    origin: 'import',
    config: c.config,
    stepsDone: c.state.stepsDone,
    history: { metrics: c.metrics, evals: c.evals },
    checkpoint: bytes,
    savedAt: now.toISOString(),
  };
}
