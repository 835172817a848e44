// npm run generate's entry point through node scripts/run-node.mjs (the npm script's target), as a
// child process, on a run folder holding only checkpoint.safetensors: the text on stdout, nothing
// on stderr; a missing run exits 2 naming it. The command's output and errors are tested in process
// in tests/decode/cli.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { preset } from '../../src/train/presets/presets';
import { writeCheckpointRun } from '../helpers/run-folder';
import { nsaModel } from './helpers';

const root = mkdtempSync(join(tmpdir(), 'nsa-generate-entry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const generate = (...argv: string[]) =>
  spawnSync(process.execPath, ['scripts/run-node.mjs', 'src/cli/generate.ts', '--runs-dir', root, ...argv], {
    encoding: 'utf8',
    timeout: 60_000,
  });

describe('npm run generate (spawned)', () => {
  it('the entry point runs through node scripts/run-node.mjs (the npm script)', () => {
    const model = nsaModel({}, { vocabSize: 256, dim: 16, ffnHidden: 24, dk: 4, dv: 4, seqLen: 80, initStd: 0.5 });
    writeCheckpointRun(join(root, 'nsa'), { ...preset('tiny'), model }, initParams(paramSpecs(model), 5), 3);
    const p = generate('--cpu', '--run', 'nsa', '--prompt', 'ab', '--tokens', '3', '--seed', '2');
    expect(p.stderr).toBe('');
    expect(p.status).toBe(0);
    expect(p.stdout).toMatch(/3 tokens after a 2-token prompt/);
    const q = generate('--run', 'missing', '--prompt', 'ab');
    expect(q.status).toBe(2);
    expect(q.stderr).toMatch(/run 'missing' not found/);
  });
});
