// Every CLI refuses what it does not know, as a spawned process: exit 2 with the flag named and no
// GPU work (each refusal comes before the device is asked for). The rules themselves are tested in
// process (args.test.ts); this checks each entry point uses the strict parser and that npm run
// train refuses impossible sizes and bad data files before any GPU work, creating no run folder.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runCli } from '../helpers/cli-process';

const out = mkdtempSync(join(tmpdir(), 'nsa-strict-cli-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const CLIS = ['train', 'generate', 'eval-recall', 'compare', 'bench', 'bench-nsa', 'gpu-adapter', 'train-golden', 'export'];

describe('strict CLIs (spawned)', { timeout: 120_000 }, () => {
  it('each CLI exits 2 on an unknown flag, naming it, before any GPU work', async () => {
    const results = await Promise.all(CLIS.map((c) => runCli(c, ['--bogus-flag', '1'])));
    for (const [i, r] of results.entries()) {
      expect(r.code, `${CLIS[i]}: ${r.stderr}`).toBe(2);
      expect(r.stderr, CLIS[i]).toMatch(/^unknown flag --bogus-flag\n/);
      expect(r.stdout + r.stderr, CLIS[i]).not.toMatch(/\[gpu\]/);
    }
  });

  it('npm run train: --stpes 2, --batch 1e9, --set train.gradAccum=1e6 and a directory as data exit 2 naming them; no run folder', async () => {
    const [typo, batch, accum, folder] = await Promise.all([
      runCli('train', ['--out', out, '--stpes', '2']),
      runCli('train', ['--out', out, '--data', 'random', '--batch', '1e9']),
      runCli('train', ['--out', out, '--data', 'random', '--set', 'train.gradAccum=1e6']),
      runCli('train', ['--out', out, '--data', `file:${out}`]),
    ]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^unknown flag --stpes \(did you mean --steps\?\)/);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toMatch(/^invalid configuration:\ntrain\.batchSize: 1000000000 needs a [\d.]+ GiB tensor \(logits\)/);
    expect(accum.code).toBe(2);
    expect(accum.stderr).toMatch(/\ntrain\.gradAccum: 1000000 needs at least [\d.]+ GiB of prebuilt dispatches/);
    expect(folder.code).toBe(2);
    expect(folder.stderr.trim()).toBe(`data file ${out}: is a directory; give a text file (--data file:<path to a .txt file>)`);
    for (const r of [typo, batch, accum, folder]) expect(r.stdout + r.stderr).not.toMatch(/\[gpu\]/);
    expect(readdirSync(out)).toEqual([]); // refused before a run folder is made
  });
});
