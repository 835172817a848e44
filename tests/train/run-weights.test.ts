// readRunWeights: a run folder's weights come from its checkpoint.safetensors (all a run stopped
// mid-way has), else from the older config.json + weights.json + weights.bin, bit for bit; with
// both, the checkpoint. A folder with neither, or a damaged file, is refused naming the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { CheckpointFormatError } from '../../src/train/checkpoint/checkpoint';
import { readRunWeights, RunWeightsNotFoundError } from '../../src/train/checkpoint/run-files';
import { preset } from '../../src/train/presets/presets';
import { writeCheckpointRun, writeLegacyRun } from '../helpers/run-folder';

const root = mkdtempSync(join(tmpdir(), 'nsa-run-weights-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const config = preset('tiny');
const specs = paramSpecs(config.model);
const values = initParams(specs, 11);
const other = initParams(specs, 12);

const bits = (m: ReadonlyMap<string, Float32Array>) => specs.map((s) => Array.from(new Uint32Array(m.get(s.name)!.slice().buffer)));

describe('readRunWeights', () => {
  it('a folder with only checkpoint.safetensors: its parameters, config and step', () => {
    const dir = join(root, 'checkpoint');
    writeCheckpointRun(dir, config, values, 5);
    const w = readRunWeights(dir);
    expect([w.source, w.stepsDone]).toEqual(['checkpoint.safetensors', 5]);
    expect(w.config).toEqual(config);
    expect(bits(w.values)).toEqual(bits(values));
  });

  it('an older folder (config.json, weights.json, weights.bin) still reads, bit for bit', () => {
    const dir = join(root, 'legacy');
    writeLegacyRun(dir, config, values, 9);
    const w = readRunWeights(dir);
    expect([w.source, w.stepsDone]).toEqual(['weights.json + weights.bin', 9]);
    expect(w.config.model).toEqual(config.model);
    expect([...w.values.keys()]).toEqual(specs.map((s) => s.name));
    expect(bits(w.values)).toEqual(bits(values));
  });

  it('with both, the checkpoint (what training wrote last)', () => {
    const dir = join(root, 'both');
    writeLegacyRun(dir, config, other, 9);
    writeCheckpointRun(dir, config, values, 5);
    const w = readRunWeights(dir);
    expect(w.source).toBe('checkpoint.safetensors');
    expect(bits(w.values)).toEqual(bits(values));
  });

  it('neither: RunWeightsNotFoundError naming what is missing', () => {
    const dir = join(root, 'half');
    writeLegacyRun(dir, config, values);
    rmSync(join(dir, 'weights.bin'));
    let e: unknown;
    try {
      readRunWeights(dir);
    } catch (x) {
      e = x;
    }
    expect(e).toBeInstanceOf(RunWeightsNotFoundError);
    expect((e as RunWeightsNotFoundError).missing).toEqual(['checkpoint.safetensors', 'weights.bin']);
    expect((e as Error).message).toBe(
      `${dir} has no checkpoint.safetensors (nor the older config.json + weights.json + weights.bin): missing checkpoint.safetensors, weights.bin`,
    );
  });

  it('damaged files are refused with CheckpointFormatError naming the file and field', () => {
    const bad = (name: string, edit: (dir: string) => void, message: RegExp) => {
      const dir = join(root, name);
      writeLegacyRun(dir, config, values);
      edit(dir);
      expect(() => readRunWeights(dir)).toThrow(CheckpointFormatError);
      expect(() => readRunWeights(dir)).toThrow(message);
    };
    bad('json', (d) => writeFileSync(join(d, 'weights.json'), '{'), /json\/weights\.json: \(file\): is not valid JSON/);
    bad(
      'format',
      (d) => writeFileSync(join(d, 'weights.json'), JSON.stringify({ format: 'other', tensors: [] })),
      /format\/weights\.json: format: is "other", not 'nsa-playground-weights-v1'/,
    );
    bad(
      'short',
      (d) => writeFileSync(join(d, 'weights.bin'), new Uint8Array(8)),
      /short\/weights\.bin: wte: values \[0, \d+\) of weights\.json lie outside its 2 values/,
    );
    bad(
      'odd',
      (d) => writeFileSync(join(d, 'weights.bin'), new Uint8Array(6)),
      /odd\/weights\.bin: \(file\): 6 bytes is not a whole number of float32 values/,
    );
    const dir = join(root, 'broken');
    writeCheckpointRun(dir, config, values);
    writeFileSync(join(dir, 'checkpoint.safetensors'), new Uint8Array(5));
    expect(() => readRunWeights(dir)).toThrow(CheckpointFormatError);
    expect(() => readRunWeights(dir)).toThrow(/broken\/checkpoint\.safetensors: /);
  });
});
