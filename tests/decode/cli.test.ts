// The generate command end to end through run folders in a temp dir that hold only
// checkpoint.safetensors, as a run stopped mid-way leaves them (CPU only: --cpu, the float64
// decoder; the GPU decoder's run is tests/decode/cli-gpu.test.ts): output = prompt + the text
// generate() gives for the same options, the NSA and DSA reads tables and summaries, and a clear message with
// exit code 2 for each user error. A folder of the older format (config.json, weights.json,
// weights.bin) still generates the same text. The real entry point (the npm script's target) runs
// as a child process in tests/decode/cli.integration.test.ts.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runGenerateCli } from '../../src/cli/generate-cli';
import { cpuTokenDecoder, generate } from '../../src/decode/generate';
import type { ModelConfig } from '../../src/definitions/model-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { createByteTokenizer } from '../../src/train/data/byte-tokenizer';
import { preset } from '../../src/train/presets/presets';
import { writeCheckpointRun, writeLegacyRun } from '../helpers/run-folder';
import { nsaModel } from './helpers';

const root = mkdtempSync(join(tmpdir(), 'nsa-generate-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A run stopped after `steps` steps: its folder holds only checkpoint.safetensors. */
function writeRun(name: string, model: ModelConfig, steps = 3): Map<string, Float32Array> {
  const values = initParams(paramSpecs(model), 5);
  writeCheckpointRun(join(root, name), { ...preset('tiny'), model }, values, steps);
  return values;
}

const dense: ModelConfig = { ...preset('tiny').model, attention: 'dense', dim: 16, ffnHidden: 24, dk: 4, dv: 4, seqLen: 24, initStd: 0.5 };
const nsa: ModelConfig = nsaModel({}, { vocabSize: 256, dim: 16, ffnHidden: 24, dk: 4, dv: 4, seqLen: 80, initStd: 0.5 });
const denseValues = writeRun('dense', dense);
mkdirSync(join(root, 'empty'));
const nsaValues = writeRun('nsa', nsa);
// DSA (docs/dsa-spec.md section 7): k = 6 < the context, so late queries read fewer keys than dense.
const dsa: ModelConfig = {
  ...dense,
  seqLen: 40,
  attention: 'dsa',
  dsa: { indexHeads: 2, indexDim: 4, topK: 6, warmupSteps: 1, lossWeight: 1 },
};
const dsaValues = writeRun('dsa', dsa);
// The dense weights in the older format; and a folder with both, whose older files hold other weights.
writeLegacyRun(join(root, 'legacy'), { ...preset('tiny'), model: dense }, denseValues, 7);
writeLegacyRun(join(root, 'both'), { ...preset('tiny'), model: dense }, initParams(paramSpecs(dense), 6), 7);
copyFileSync(join(root, 'dense', 'checkpoint.safetensors'), join(root, 'both', 'checkpoint.safetensors'));
mkdirSync(join(root, 'broken'));
writeFileSync(join(root, 'broken', 'checkpoint.safetensors'), new Uint8Array(5));
mkdirSync(join(root, 'half'));
copyFileSync(join(root, 'legacy', 'weights.json'), join(root, 'half', 'weights.json'));

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runGenerateCli(['--runs-dir', root, '--cpu', ...argv], { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('npm run generate', () => {
  const tok = createByteTokenizer();

  it('dense run (only checkpoint.safetensors): prints prompt + the generated text of generate() with the same options', async () => {
    expect(readdirSync(join(root, 'dense'))).toEqual(['checkpoint.safetensors']);
    const r = await cli('--run', 'dense', '--prompt', 'The ', '--tokens', '6', '--temperature', '0.9', '--top-k', '20', '--seed', '4');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`[run] ${join(root, 'dense')} (checkpoint.safetensors, step 3): dense attention`);
    const want = await generate(
      dense,
      cpuTokenDecoder(dense, denseValues),
      tok.encode('The '),
      { maxTokens: 6, temperature: 0.9, topK: 20, seed: 4, vocabLimit: 256 },
      (x) => tok.decode(x),
    );
    expect(want.tokens.length).toBe(6);
    expect(r.out.split('\n')).toContain('The ' + want.text);
    expect(r.out).toMatch(/6 tokens after a 4-token prompt, stopped by --tokens/);
    expect(r.out).toMatch(/dense attention: query t reads t\+1 keys/);
  });

  it('NSA run: per-token reads beside the formula and dense, a summary, stop at the context', async () => {
    const prompt = 'Once upon a time';
    const r = await cli('--run', 'nsa', '--prompt', prompt, '--tokens', '1000', '--temperature', '0');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const n = nsa.seqLen - prompt.length;
    expect(r.out).toMatch(new RegExp(`${n} tokens after a ${prompt.length}-token prompt, stopped by the context length`));
    const rows = r.out.split('\n').filter((l) => /^\s+\d+\s/.test(l));
    expect(rows.length).toBe(n);
    const lg = nsa.nLayers * nsa.nKvGroups;
    // The last row: query t = seqLen − 2; window and compressed counts are fixed by t alone.
    const last = rows[rows.length - 1].trim().split(/\s+/);
    const t = nsa.seqLen - 2;
    expect(Number(last[0])).toBe(t);
    const ncmp = Math.floor((t + 1 - nsa.nsa!.l) / nsa.nsa!.d) + 1;
    const cols = last.slice(-7, -1);
    expect(Number(cols[0])).toBe(lg * ncmp);
    expect(Number(cols[2])).toBe(lg * nsa.nsa!.w);
    expect(Number(cols[3])).toBe(Number(cols[0]) + Number(cols[1]) + Number(cols[2]));
    expect(cols[4]).toBe(`${cols[0]}+${cols[1]}+${cols[2]}=${cols[3]}`);
    expect(Number(cols[5])).toBe(lg * (t + 1));
    // Late in an 80-token context NSA reads fewer keys than dense (early on it reads more).
    expect(Number(cols[3])).toBeLessThan(Number(cols[5]));
    expect(rows.every((l) => l.endsWith('yes'))).toBe(true);
    expect(r.out).toMatch(/\[reads\] total \d+ keys vs dense \d+ \(\d+\.\d%\) over \d+ tokens/);
    expect(r.out).toMatch(/every \(token, layer, group\) count equals the formula/);
    const want = await generate(
      nsa,
      cpuTokenDecoder(nsa, nsaValues),
      tok.encode(prompt),
      { maxTokens: 1000, temperature: 0, topK: 40, seed: 1, vocabLimit: 256 },
      (x) => tok.decode(x),
    );
    expect(r.out.split('\n')).toContain(prompt + want.text);
  });

  it('DSA run: per-token main and indexer reads beside the formulas, the text of generate()', async () => {
    const prompt = 'Once upon';
    const r = await cli('--run', 'dsa', '--prompt', prompt, '--tokens', '1000', '--temperature', '0');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('dsa attention');
    const n = dsa.seqLen - prompt.length;
    const rows = r.out.split('\n').filter((l) => /^\s+\d+\s/.test(l));
    expect(rows.length).toBe(n);
    const lg = dsa.nLayers * dsa.nKvGroups;
    const k = dsa.dsa!.topK;
    for (const row of rows) {
      const [t, ...rest] = row.trim().split(/\s+/);
      const cols = rest.slice(-6);
      const q = Number(t);
      expect(cols.map(Number).slice(0, 5), `t=${q}`).toEqual([
        lg * Math.min(k, q + 1),
        lg * Math.min(k, q + 1),
        dsa.nLayers * (q + 1),
        dsa.nLayers * (q + 1),
        lg * (q + 1),
      ]);
      expect(cols[5]).toBe('yes');
    }
    expect(r.out).toMatch(/\[reads\] total \d+ main keys vs dense \d+ \(\d+\.\d%\), and \d+ indexer keys, over \d+ tokens/);
    expect(r.out).toMatch(/every \(token, layer, group\) main count and every \(token, layer\) indexer count equals the formula/);
    const want = await generate(
      dsa,
      cpuTokenDecoder(dsa, dsaValues),
      tok.encode(prompt),
      { maxTokens: 1000, temperature: 0, topK: 40, seed: 1, vocabLimit: 256 },
      (x) => tok.decode(x),
    );
    expect(r.out.split('\n')).toContain(prompt + want.text);
    expect(want.steps.every((s) => s.indexReads.length === dsa.nLayers && s.reads.length === lg)).toBe(true);
  });

  it('a folder of the older format (config.json, weights.json, weights.bin) still generates the same text; with both, the checkpoint is read', async () => {
    const argv = ['--prompt', 'The ', '--tokens', '6', '--temperature', '0.9', '--top-k', '20', '--seed', '4'];
    const want = await cli('--run', 'dense', ...argv);
    const legacy = await cli('--run', 'legacy', ...argv);
    expect(legacy.err).toBe('');
    expect(legacy.code).toBe(0);
    expect(legacy.out).toContain(`[run] ${join(root, 'legacy')} (weights.json + weights.bin, step 7): dense attention`);
    const both = await cli('--run', 'both', ...argv);
    expect(both.out).toContain(`[run] ${join(root, 'both')} (checkpoint.safetensors, step 3)`);
    const body = (o: string) =>
      o
        .split('\n')
        .slice(1)
        .join('\n')
        .replace(/ \d+\.\d+ s \([\d.]+ tokens\/s/, '');
    expect(body(legacy.out)).toBe(body(want.out));
    expect(body(both.out)).toBe(body(want.out));
  });

  it.each([
    [['--prompt', 'x'], /missing --run/],
    [['--run', 'dense'], /missing --prompt/],
    [['--run', 'nope', '--prompt', 'x'], /run 'nope' not found/],
    [['--run', 'dense', '--prompt', 'x'.repeat(24)], /--prompt is 24 tokens .* context of 24: at most 23/],
    [['--run', 'dense', '--prompt', ''], /--prompt is empty/],
    [['--run', 'dense', '--prompt', 'x', '--temprature', '1'], /unknown flag --temprature/],
    [['--run', 'dense', '--prompt', 'x', '--tokens', 'many'], /--tokens must be an integer/],
    [['--run', 'dense', '--prompt', 'x', '--top-k', '-1'], /--top-k must be ≥ 0/],
    [['--run', 'dense', '--prompt', 'x', '--top-p', '0'], /--top-p must be in \(0, 1\]/],
    [['--run', 'dense', 'hello'], /unexpected argument 'hello'/],
    [['--run', 'dense', '--prompt'], /--prompt needs a value/],
    [['--run', 'dense', '--prompt', 'x', '--temperature', 'hot'], /--temperature must be a number/],
    [
      ['--run', 'empty', '--prompt', 'x'],
      /run 'empty' has no checkpoint in .*empty \(no checkpoint\.safetensors, nor the older config\.json \+ weights\.json \+ weights\.bin\); training writes checkpoint\.safetensors/,
    ],
    [['--run', 'half', '--prompt', 'x'], /run 'half' has no checkpoint in .*half \(no checkpoint\.safetensors/],
    [['--run', 'broken', '--prompt', 'x'], /broken\/checkpoint\.safetensors: /],
  ])('error: %j', async (argv, msg) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(msg);
    expect(r.out).toBe('');
  });
});
