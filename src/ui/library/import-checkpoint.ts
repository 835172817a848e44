// A checkpoint file brought into the run library (made by the CLI or another browser): decoded and
// validated in full first (sizes, dtypes, shapes, config: CheckpointFormatError names the file and
// the field), so a broken file is refused before anything is stored.
import { decodeCheckpoint } from '../../train/checkpoint/checkpoint';
import { newRunId } from './entry';
import type { RunSave } from './run-storage';

/** The file's name without `.safetensors` (the new entry's name). */
export function runNameOfFile(file: string): string {
  return file.replace(/\.safetensors$/i, '') || file;
}

/** The library save of a checkpoint file; throws CheckpointFormatError for a file that is not one. */
export function importedRun(bytes: Uint8Array, file: string, now: Date = new Date()): RunSave {
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
