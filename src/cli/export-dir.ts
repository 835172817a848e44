// Node side of the exported directory (npm run export, npm run train -- --from-export): writes the
// files src/train/export builds, each atomically, and reads a directory back into a training
// checkpoint (a missing file is named; a broken one is a CheckpointFormatError naming file and field).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

import type { TrainingCheckpoint } from '../train/checkpoint/checkpoint';
import { RUN_SOURCE_FILE, RunFolder, writeFileAtomic } from '../train/checkpoint/run-files';
import type { RunConfig } from '../train/config';
import type { Dataset } from '../train/data/datasets';
import { CONFIG_FILE, MODEL_FILE, OPTIMIZER_FILE } from '../train/export/config-json';
import { type ExportFile, importDirectoryFiles } from '../train/export/directory';
import { intFlag, type ParsedArgs } from './args';
import { datasetForRun } from './data-node';
import { prepareNewRunFolder, runFolderPath } from './run-folder-guard';
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

/** Flags a run continued from an exported directory takes: the rest of its configuration is the directory's. */
export const FROM_EXPORT_FLAGS = ['from-export', 'steps', 'run', 'out', 'data', 'stall-timeout', 'checkpoint-every', 'help'];

/**
 * --from-export DIR: a new run folder continuing the exported model (its config, step, data cursor,
 * weights and AdamW moments). --steps N raises train.steps (the schedule's length) to continue past
 * it; an uploaded-text run needs its text again (--data file:<path>).
 */
export function fromExportRun(
  args: ParsedArgs,
  dir: string,
): { config: RunConfig; dir: string; openFolder: () => RunFolder; dataset: Dataset; from: TrainingCheckpoint } {
  const extra = [...args.flags.keys()].filter((k) => !FROM_EXPORT_FLAGS.includes(k));
  if (extra.length || args.sets.length)
    throw new UsageError(
      `--from-export continues ${dir} with the configuration in its config.json; drop ${[...extra.map((f) => `--${f}`), ...(args.sets.length ? ['--set'] : [])].join(', ')}`,
      { flag: extra[0] ?? 'set' },
    );
  const from = readExportDirectory(dir, 'from-export');
  const steps = intFlag(args, 'steps');
  if (steps !== undefined) {
    if (steps < from.state.stepsDone)
      throw new UsageError(`--steps ${steps} is below the exported step ${from.state.stepsDone}`, { flag: 'steps', value: String(steps) });
    from.config.train.steps = steps;
  }
  const data = args.flags.get('data');
  if (data !== undefined && !(data.startsWith('file:') && from.config.data.source === 'upload'))
    throw new UsageError(`--from-export: --data takes only file:<path>, for a model trained on an uploaded text`, {
      flag: 'data',
      value: data,
    });
  if (from.config.data.source === 'upload' && data === undefined)
    throw new UsageError(`--from-export: ${dir} was trained on an uploaded text; give it again with --data file:<path>`, { flag: 'data' });
  const uploadPath = data?.slice('file:'.length);
  const runName = args.flags.get('run') ?? `from-export-${basename(resolve(dir))}-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  const runDir = runFolderPath(args.flags.get('out') ?? 'runs', runName);
  // One writer per folder: locked before any GPU work (a folder stopped before its first checkpoint is reused).
  const target = prepareNewRunFolder(runDir, runName);
  const dataset = datasetForRun(from.config, uploadPath);
  // The folder is created only once the run is known to fit the adapter (train.ts opens it).
  const openFolder = () => {
    const folder = target.open();
    folder.writeJson(RUN_SOURCE_FILE, { uploadPath: uploadPath ?? null });
    return folder;
  };
  return { config: from.config, dir: runDir, openFolder, dataset, from };
}
