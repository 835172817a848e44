// Node only: the run folder — heartbeat.jsonl, metrics.csv, config.json and the final weights.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { RunConfig } from './config';
import type { EvalMetrics, Heartbeat, StepMetrics } from './types';

// The column format is shared with the page's worker (browser-safe module).
export { METRICS_HEADER, metricsCsvRow } from './metrics-csv';
import { METRICS_HEADER, metricsCsvRow } from './metrics-csv';

export class RunFolder {
  readonly heartbeatPath: string;
  readonly metricsPath: string;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.heartbeatPath = join(dir, 'heartbeat.jsonl');
    this.metricsPath = join(dir, 'metrics.csv');
    writeFileSync(this.heartbeatPath, '');
    writeFileSync(this.metricsPath, METRICS_HEADER + '\n');
  }

  heartbeat(b: Heartbeat): void {
    appendFileSync(this.heartbeatPath, JSON.stringify(b) + '\n');
  }

  metrics(m: StepMetrics | null, e: EvalMetrics | null = null): void {
    appendFileSync(this.metricsPath, metricsCsvRow(m, e) + '\n');
  }

  writeJson(name: string, value: unknown): void {
    writeFileSync(join(this.dir, name), JSON.stringify(value, null, 2) + '\n');
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
  writeFileSync(join(dir, 'weights.bin'), new Uint8Array(all.buffer));
  writeFileSync(join(dir, 'weights.json'), JSON.stringify(manifest, null, 2) + '\n');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, ...extra }, null, 2) + '\n');
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
