// Node only: the run folder — heartbeat.jsonl, metrics.csv, checkpoint.safetensors (written
// atomically every K steps, on a signal, on a non-finite stop and at the end), config.json,
// summary.json and the final weights.
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

import type { RunConfig } from './config';
import type { EvalMetrics, Heartbeat, StepMetrics } from './types';

// The column format is shared with the page's worker (browser-safe module).
export { METRICS_HEADER, metricsCsvRow } from './metrics-csv';
import { METRICS_HEADER, metricsCsvRow } from './metrics-csv';

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

export interface WeightsManifest {
  format: 'nsa-playground-weights-v1';
  dtype: 'float32';
  tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
}

/** Writes config.json, weights.json (manifest) and weights.bin (little-endian f32, manifest order). */
export function saveCheckpoint(
  dir: string,
  config: RunConfig,
  shapes: ReadonlyArray<{ name: string; shape: number[] }>,
  values: ReadonlyMap<string, Float32Array>,
  extra: Record<string, unknown> = {},
): void {
  mkdirSync(dir, { recursive: true });
  const manifest: WeightsManifest = { format: 'nsa-playground-weights-v1', dtype: 'float32', tensors: [] };
  let offset = 0;
  for (const s of shapes) {
    const v = values.get(s.name);
    if (!v) throw new Error(`checkpoint: missing tensor ${s.name}`);
    manifest.tensors.push({ name: s.name, shape: s.shape, offset, length: v.length });
    offset += v.length;
  }
  const all = new Float32Array(offset);
  for (const t of manifest.tensors) all.set(values.get(t.name)!, t.offset);
  writeFileAtomic(join(dir, 'weights.bin'), new Uint8Array(all.buffer));
  writeFileAtomic(join(dir, 'weights.json'), JSON.stringify(manifest, null, 2) + '\n');
  writeFileAtomic(join(dir, 'config.json'), JSON.stringify({ ...config, ...extra }, null, 2) + '\n');
}

export function loadCheckpoint(dir: string): { config: RunConfig; values: Map<string, Float32Array> } {
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as RunConfig;
  const manifest = JSON.parse(readFileSync(join(dir, 'weights.json'), 'utf8')) as WeightsManifest;
  if (manifest.format !== 'nsa-playground-weights-v1') throw new Error(`${dir}/weights.json: unknown format ${manifest.format}`);
  const bin = readFileSync(join(dir, 'weights.bin'));
  const all = new Float32Array(bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength));
  const values = new Map<string, Float32Array>();
  for (const t of manifest.tensors) values.set(t.name, all.slice(t.offset, t.offset + t.length));
  return { config, values };
}
