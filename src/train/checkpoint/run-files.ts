// Node only: the run folder — heartbeat.jsonl, metrics.csv, checkpoint.safetensors (written
// atomically every K steps, on a signal and at the end (a non-finite stop writes none): the one weight format
// every command reads), config.json and summary.json; and the reading of a folder's weights
// (readRunWeights), older folders' weights.json + weights.bin included.
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

import type { RunConfig } from '../config';
import type { EvalMetrics, Heartbeat, StepMetrics } from '../types';
import { CheckpointFormatError, decodeCheckpoint } from './checkpoint';

// The column format is shared with the page's worker (browser-safe module).
export { METRICS_HEADER, metricsCsvRow } from '../metrics-csv';
import { METRICS_HEADER, metricsCsvRow } from '../metrics-csv';

export const CHECKPOINT_FILE = 'checkpoint.safetensors';
/** What a resumed run needs beyond the checkpoint (the uploaded text's path). */
export const RUN_SOURCE_FILE = 'run-source.json';

/** Hooks for tests: called between writing the temporary file and renaming it over the target. */
export interface AtomicWriteHooks {
  beforeRename?(tmpPath: string): void;
}

/**
 * Writes `bytes` to `path` atomically: a temporary file beside it, flushed to disk, then renamed
 * over the target. A crash at any point leaves either the old file or the new one, never a torn one.
 */
export function writeFileAtomic(path: string, bytes: Uint8Array | string, hooks: AtomicWriteHooks = {}): void {
  const tmp = join(dirname(path), `.${path.split('/').pop()}.tmp-${process.pid}`);
  const fd = openSync(tmp, 'w');
  try {
    const data = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let off = 0;
    while (off < data.byteLength) off += writeSync(fd, data, off, data.byteLength - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  hooks.beforeRename?.(tmp);
  renameSync(tmp, path);
}

export class RunFolder {
  readonly heartbeatPath: string;
  readonly metricsPath: string;
  readonly checkpointPath: string;

  private constructor(readonly dir: string) {
    this.heartbeatPath = join(dir, 'heartbeat.jsonl');
    this.metricsPath = join(dir, 'metrics.csv');
    this.checkpointPath = join(dir, CHECKPOINT_FILE);
  }

  /** A new run's folder; refuses one that exists (a new run never overwrites another). */
  static create(dir: string): RunFolder {
    if (existsSync(dir))
      throw new Error(`${dir} already exists: continue that run with --resume ${dir}, or name a new one with --run NAME`);
    mkdirSync(dirname(dir), { recursive: true });
    mkdirSync(dir);
    const f = new RunFolder(dir);
    writeFileSync(f.heartbeatPath, '');
    writeFileSync(f.metricsPath, METRICS_HEADER + '\n');
    return f;
  }

  /**
   * An existing run's folder, to continue it: heartbeats append; metrics.csv is rewritten from the
   * checkpoint's rows (steps after the checkpoint, lost with the process, are dropped).
   */
  static resume(dir: string, rows: ReadonlyArray<readonly [StepMetrics | null, EvalMetrics | null]>): RunFolder {
    const f = new RunFolder(dir);
    writeFileAtomic(f.metricsPath, [METRICS_HEADER, ...rows.map(([m, e]) => metricsCsvRow(m, e))].join('\n') + '\n');
    return f;
  }

  heartbeat(b: Heartbeat): void {
    appendFileSync(this.heartbeatPath, JSON.stringify(b) + '\n');
  }

  metrics(m: StepMetrics | null, e: EvalMetrics | null = null): void {
    appendFileSync(this.metricsPath, metricsCsvRow(m, e) + '\n');
  }

  writeJson(name: string, value: unknown): void {
    writeFileAtomic(join(this.dir, name), JSON.stringify(value, null, 2) + '\n');
  }

  writeCheckpoint(bytes: Uint8Array, hooks?: AtomicWriteHooks): void {
    writeFileAtomic(this.checkpointPath, bytes, hooks);
  }
}

/** A run folder's weights, wherever they were read from. */
export interface RunWeights {
  config: RunConfig;
  /** Parameters keyed by src/definitions/params.ts names. */
  values: Map<string, Float32Array>;
  /** Steps trained (checkpoint state; an older folder's config.json stepsDone), null when unknown. */
  stepsDone: number | null;
  /** What was read, for messages: 'checkpoint.safetensors', or the older 'weights.json + weights.bin'. */
  source: string;
}

/** The final weights runs wrote before checkpoint.safetensors became the one weight format (read only). */
export const LEGACY_WEIGHTS_FILES = ['config.json', 'weights.json', 'weights.bin'] as const;

/** A run folder holding neither checkpoint.safetensors nor the older weights.json + weights.bin. */
export class RunWeightsNotFoundError extends Error {
  override readonly name = 'RunWeightsNotFoundError';
  constructor(
    readonly dir: string,
    /** The files looked for that are missing. */
    readonly missing: string[],
  ) {
    super(`${dir} has no ${CHECKPOINT_FILE} (nor the older ${LEGACY_WEIGHTS_FILES.join(' + ')}): missing ${missing.join(', ')}`);
  }
}

/** weights.json of the older final-weights format: tensors in weights.bin by float offset. */
interface LegacyWeightsManifest {
  format: 'nsa-playground-weights-v1';
  dtype: 'float32';
  tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
}

/**
 * The weights of a run folder: its checkpoint.safetensors (what training writes every
 * --checkpoint-every steps, on a stop and at the end, so a run stopped mid-way has it), else the
 * older config.json + weights.json + weights.bin that runs wrote at the end before. Errors name the
 * file at fault (CheckpointFormatError for a bad checkpoint); RunWeightsNotFoundError when the
 * folder has neither.
 */
export function readRunWeights(dir: string): RunWeights {
  const file = join(dir, CHECKPOINT_FILE);
  if (existsSync(file)) {
    const c = decodeCheckpoint(readFileSync(file), { file });
    return { config: c.config, values: c.params, stepsDone: c.state.stepsDone, source: CHECKPOINT_FILE };
  }
  const missing = LEGACY_WEIGHTS_FILES.filter((f) => !existsSync(join(dir, f)));
  if (missing.length) throw new RunWeightsNotFoundError(dir, [CHECKPOINT_FILE, ...missing]);
  return readLegacyWeights(dir);
}

/** An older folder's weights; CheckpointFormatError names the file and the field at fault. */
function readLegacyWeights(dir: string): RunWeights {
  const json = (name: string): Record<string, unknown> => {
    const path = join(dir, name);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(path, 'utf8'));
    } catch (e) {
      throw new CheckpointFormatError(path, '(file)', `is not valid JSON (${(e as Error).message})`);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new CheckpointFormatError(path, '(file)', 'is not a JSON object');
    return raw as Record<string, unknown>;
  };
  const config = json('config.json') as unknown as RunConfig & { stepsDone?: unknown };
  const manifestPath = join(dir, 'weights.json');
  const manifest = json('weights.json') as Partial<LegacyWeightsManifest>;
  if (manifest.format !== 'nsa-playground-weights-v1')
    throw new CheckpointFormatError(manifestPath, 'format', `is ${JSON.stringify(manifest.format)}, not 'nsa-playground-weights-v1'`);
  if (!Array.isArray(manifest.tensors)) throw new CheckpointFormatError(manifestPath, 'tensors', 'is not a list');
  const binPath = join(dir, 'weights.bin');
  const bin = readFileSync(binPath);
  if (bin.byteLength % 4 !== 0)
    throw new CheckpointFormatError(binPath, '(file)', `${bin.byteLength} bytes is not a whole number of float32 values`);
  const all = new Float32Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  const values = new Map<string, Float32Array>();
  for (const t of manifest.tensors) {
    const { offset, length } = t;
    if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0 && offset + length <= all.length))
      throw new CheckpointFormatError(
        binPath,
        t.name,
        `values [${offset}, ${offset + length}) of weights.json lie outside its ${all.length} values`,
      );
    values.set(t.name, all.slice(offset, offset + length));
  }
  const steps = config.stepsDone;
  return {
    config,
    values,
    stepsDone: typeof steps === 'number' && Number.isSafeInteger(steps) ? steps : null,
    source: 'weights.json + weights.bin',
  };
}
