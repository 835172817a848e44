// Node side of the exported directory (npm run export, npm run train -- --from-export): writes the
// files src/train/export builds, each atomically, and reads a directory back into a training
// checkpoint (a missing file is named; a broken one is a CheckpointFormatError naming file and field).
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import { CONFIG_FILE, MODEL_FILE, OPTIMIZER_FILE } from '../train/export/config-json';
import { type ExportFile, importDirectoryFiles } from '../train/export/directory';
import { writeFileAtomic } from '../train/run-files';
import { UsageError } from './usage';

/** Writes the files into `dir` (created if needed); returns their paths. */
export function writeExportDirectory(dir: string, files: readonly ExportFile[]): string[] {
  mkdirSync(dir, { recursive: true });
  return files.map((f) => {
    const path = join(dir, f.name);
    writeFileAtomic(path, f.bytes);
    return path;
  });
}

/** The checkpoint an exported directory holds; `flag` names the CLI flag in errors about missing files. */
export function readExportDirectory(dir: string, flag: string): TrainingCheckpoint {
  const read = (name: string): Uint8Array => {
    const path = join(dir, name);
    try {
      return readFileSync(path);
    } catch (e) {
      throw new UsageError(`--${flag}: cannot read ${path} (${(e as Error).message})`, { flag, value: dir });
    }
  };
  return importDirectoryFiles({ dir, config: read(CONFIG_FILE), model: read(MODEL_FILE), optimizer: read(OPTIMIZER_FILE) });
}
