// npm run train's non-finite stop (a child process on Dawn): a NaN planted in the weights after a
// checkpoint (test hook NSA_TEST_NAN_WEIGHT_AFTER_STEP) stops the run with exit 4, writes nothing,
// and says which step the last good checkpoint holds; that checkpoint is untouched (byte for byte)
// and loads. Before, the checkpoint was rewritten holding the NaN while the message said the
// weights were intact.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { decodeCheckpoint } from '../../src/train/checkpoint/checkpoint';

const root = mkdtempSync(join(tmpdir(), 'nsa-non-finite-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const RUN = ['--preset', 'tiny', '--data', 'random', '--steps', '12', '--batch', '2', '--eval-every', '0', '--log-every', '1'];
const train = (args: string[], env: Record<string, string>) =>
  spawnSync(process.execPath, ['scripts/run-node.mjs', 'src/cli/train.ts', '--out', root, ...RUN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });

describe('npm run train: a non-finite stop', { timeout: 600_000 }, () => {
  it('keeps the last good checkpoint untouched and says which step it holds', () => {
    const r = train(['--run', 'nan', '--checkpoint-every', '3'], { NSA_TEST_NAN_WEIGHT_AFTER_STEP: '3' });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/step \d+: loss NaN.*non-finite; the run stops and this state is not checkpointed/);
    const file = join(root, 'nan', 'checkpoint.safetensors');
    expect(r.stderr).toContain(`The last good checkpoint is untouched: ${file} holds the run after 3 steps`);
    expect(r.stderr).not.toMatch(/intact/);
    // Only the interval checkpoint at step 3 was ever written, and it is the file on disk.
    expect(r.stdout.match(/\[checkpoint\] .*/g)).toEqual([expect.stringMatching(/^\[checkpoint\] step 3 \(interval\)/)]);
    const c = decodeCheckpoint(readFileSync(file), { file });
    expect([c.state.stepsDone, c.reason]).toEqual([3, 'interval']);
    expect(c.metrics.map((m) => m.step)).toEqual([0, 1, 2]);
  });

  it('with no checkpoint written yet, says there is none', () => {
    const r = train(['--run', 'nan0', '--checkpoint-every', '0'], { NSA_TEST_NAN_WEIGHT_AFTER_STEP: '1' });
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/No checkpoint was written before the stop/);
    expect(r.stdout).not.toMatch(/\[checkpoint\]/);
  });
});
