// npm run train -- --from-export DIR refuses a broken or missing directory before any GPU work,
// naming the file and the field (exit 2), and takes only the flags a continued run can use; npm run
// export writes an older export (format version 1) again in this build's format, byte for byte.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { exportDirectoryFiles } from '../../src/train/export/directory';
import { preset } from '../../src/train/presets/presets';
import { runCli } from '../helpers/cli-process';
import { writeFiles } from './torch-side';

const root = mkdtempSync(join(tmpdir(), 'nsa-from-export-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('npm run train -- --from-export', () => {
  const c = preset('tiny');
  const params = initParams(paramSpecs(c.model), 1);
  const dir = join(root, 'exported');
  writeFiles(dir, exportDirectoryFiles({ config: c, state: { stepsDone: 0, batchesDrawn: 0 }, params, adamM: params, adamV: params }));

  it('names the missing file, the broken field, and a flag it does not take (exit 2, no run folder)', async () => {
    const broken = join(root, 'broken');
    writeFiles(broken, exportDirectoryFiles({ config: c, state: { stepsDone: 0, batchesDrawn: 0 }, params, adamM: params, adamV: params }));
    writeFileSync(join(broken, 'config.json'), JSON.stringify({ ...JSON.parse(JSON.stringify(c)), format: 'nsa-playground-export' }));
    // Side by side: each is mostly a process start.
    const [missing, bad, flag] = await Promise.all(
      [
        ['--from-export', join(root, 'nowhere')],
        ['--from-export', broken],
        ['--from-export', dir, '--preset', 'small'],
      ].map((args) => runCli('train', ['--out', root, ...args])),
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--from-export: cannot read ${join(root, 'nowhere', 'config.json')}`);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/broken\/config\.json: format_version: /);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('drop --preset');
    expect(spawnSync('ls', [root], { encoding: 'utf8' }).stdout.trim().split('\n').sort()).toEqual(['broken', 'exported']);
  }, 60_000);

  it('npm run export of an older export (format version 1) writes it again as a Hugging Face directory', () => {
    const old = join(root, 'v1');
    const files = exportDirectoryFiles({ config: c, state: { stepsDone: 0, batchesDrawn: 0 }, params, adamM: params, adamV: params });
    writeFiles(old, files.slice(0, 3));
    const cfg = JSON.parse(readFileSync(join(old, 'config.json'), 'utf8')) as Record<string, unknown>;
    for (const k of ['auto_map', 'torch_dtype', 'use_cache', 'bos_token_id', 'eos_token_id', 'pad_token_id']) delete cfg[k];
    writeFileSync(
      join(old, 'config.json'),
      JSON.stringify({ ...cfg, format_version: 1, architectures: ['NsaLlamaForCausalLM'], model_type: 'nsa_llama' }),
    );
    const out = join(root, 'v2');
    const r = spawnSync(process.execPath, ['scripts/run-node.mjs', 'src/cli/export.ts', old, '--out', out], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual(files.map((f) => f.name).sort());
    for (const f of files) expect(Buffer.from(readFileSync(join(out, f.name))).equals(f.bytes), f.name).toBe(true);
  }, 60_000);
});
