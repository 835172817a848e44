// The run library's PyTorch export (src/ui/library/pytorch-zip.ts): a stored checkpoint becomes a
// zip of the exported directory (the same bytes `npm run export` writes) and such a zip comes back
// as a training checkpoint with the same weights, moments and step; broken zips are refused naming
// the zip and the file or field.
import { unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { CheckpointFormatError, decodeCheckpoint, encodeCheckpoint, type TrainingCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { exportDirectoryFiles } from '../../src/train/export/directory';
import { preset } from '../../src/train/presets/presets';
import { importedRun, runNameOfFile } from '../../src/ui/library/import-checkpoint';
import { checkpointFromPytorchZip, pytorchZip, safeStem } from '../../src/ui/library/pytorch-zip';

function checkpoint(): TrainingCheckpoint {
  const config = preset('tiny');
  config.model.attention = 'nsa';
  const params = initParams(paramSpecs(config.model), 3);
  const moment = (scale: number) => new Map([...params].map(([k, v]) => [k, v.map((x) => x * scale)]));
  return {
    config,
    state: { stepsDone: 7, batchesDrawn: 7 },
    params,
    adamM: moment(0.5),
    adamV: moment(0.25).set('wte', new Float32Array(params.get('wte')!.length).fill(1e-3)),
    metrics: [],
    evals: [],
    reason: 'page',
    savedAt: '2026-11-23T00:00:00.000Z',
  };
}

describe('run library: PyTorch export as a zip', () => {
  it('holds <run>/config.json, model.safetensors, optimizer.safetensors with the bytes npm run export writes', () => {
    const c = checkpoint();
    const zip = pytorchZip(encodeCheckpoint(c), 'tiny nsa / run 1');
    expect(zip.name).toBe('tiny-nsa-run-1-pytorch.zip');
    const entries = unzipSync(zip.bytes);
    const expected = exportDirectoryFiles({ config: c.config, state: c.state, params: c.params, adamM: c.adamM, adamV: c.adamV });
    expect(Object.keys(entries).sort()).toEqual(expected.map((f) => `tiny-nsa-run-1/${f.name}`).sort());
    for (const f of expected) expect(Buffer.from(entries[`tiny-nsa-run-1/${f.name}`]).equals(f.bytes), f.name).toBe(true);
  });

  it('comes back as the same checkpoint (weights, both moments, step, config), and into the library under its run name', () => {
    const c = checkpoint();
    const zip = pytorchZip(encodeCheckpoint(c), 'run-a');
    const back = decodeCheckpoint(checkpointFromPytorchZip(zip.bytes, zip.name), { file: 'back' });
    expect(back.state.stepsDone).toBe(7);
    expect(back.config.model).toEqual(c.config.model);
    for (const key of ['params', 'adamM', 'adamV'] as const)
      for (const [name, v] of c[key])
        expect(
          Buffer.from(back[key].get(name)!.buffer, back[key].get(name)!.byteOffset, back[key].get(name)!.byteLength).equals(
            Buffer.from(v.buffer, v.byteOffset, v.byteLength),
          ),
          `${key} ${name}`,
        ).toBe(true);
    const run = importedRun(zip.bytes, zip.name);
    expect(run.name).toBe('run-a');
    expect(run.stepsDone).toBe(7);
  });

  it('refuses a zip that is not an export, or lacks one of its files, naming the zip and the file', () => {
    const notZip = () => checkpointFromPytorchZip(new Uint8Array([1, 2, 3]), 'x.zip');
    expect(notZip).toThrow(CheckpointFormatError);
    expect(notZip).toThrow(/x\.zip.*not a readable zip/);
    expect(() => checkpointFromPytorchZip(zipSync({ 'a.txt': new Uint8Array(1) }), 'y.zip')).toThrow(
      /y\.zip.*config\.json.*not an exported model/,
    );
    const c = checkpoint();
    const entries = unzipSync(pytorchZip(encodeCheckpoint(c), 'r').bytes);
    delete entries['r/optimizer.safetensors'];
    expect(() => checkpointFromPytorchZip(zipSync(entries), 'z.zip')).toThrow(/z\.zip.*r\/optimizer\.safetensors.*missing from the zip/);
  });

  it('names: safe stems, and the entry name of an uploaded file', () => {
    expect(safeStem('  ')).toBe('run');
    expect(safeStem('a/b c')).toBe('a-b-c');
    expect(runNameOfFile('tiny-step4.safetensors')).toBe('tiny-step4');
    expect(runNameOfFile('mine-pytorch.zip')).toBe('mine');
  });
});
