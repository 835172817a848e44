// The offline GPU bundle's parts that can be checked without packing it (packing and running it on
// SwiftShader takes minutes: `npm run gpu:pack && bash build/gpu-bundle/run.sh OUT --small
// --allow-software`, recorded in docs/benchmarks.md), in process: the summary, the adapter
// preference, the FLOP arithmetic and the learn step's rows. The bundle's scripts run as processes in
// tests/bundle/gpu-bundle.integration.test.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

// @ts-expect-error plain .mjs script without types
import { summarize, table, testCounts } from '../../scripts/gpu/summarize.mjs';
import { knownFp32Peak } from '../../src/cli/fp32-peak';
import type { ModelConfig } from '../../src/definitions/model-config';
import { attentionForwardFlops, keysPerQuery, perTokenMatmulParams, trainingFlopsPerStep } from '../../src/definitions/model-flops';
import { gpuPreferenceFromEnv } from '../../src/gpu/gpu-preference';
import { preset } from '../../src/train/presets/presets';
import { tempFolders } from '../helpers/temp-dir';

const newFolder = tempFolders('nsa-bundle-');

const tinyDense = (): ModelConfig => ({ ...preset('tiny').model, attention: 'dense' });

describe('model FLOPs (MFU in npm run bench)', () => {
  it('tiny dense: per-token matmul weights and attention counted by hand', () => {
    // wte 256·64 (as the tied output projection) + 2 layers × (wq 64·64, wk 64·32, wv 64·32,
    // wo 64·64, w1 64·128, w3 64·128, w2 128·64).
    expect(perTokenMatmulParams(tinyDense())).toBe(16384 + 2 * 36864);
    // Σ_t (t + 1) = 64·65/2 keys, × 4 heads × 2 layers × (2·16 + 2·16) FLOPs per key.
    expect(attentionForwardFlops(tinyDense())).toBe(2080 * 4 * 2 * 64);
    // 3 × (2 · params · 8·64 tokens + 8 sequences · attention).
    expect(trainingFlopsPerStep(tinyDense(), 8)).toBe(3 * (2 * 90112 * 512 + 8 * 1064960));
  });

  it('NSA keys per query: compressed + selected (≤ nSel·lSel, ≤ t+1) + window', () => {
    const m: ModelConfig = { ...tinyDense(), attention: 'nsa' }; // l 8, d 4, lSel 8, nSel 3, w 16
    expect(keysPerQuery(m, 0)).toBe(0 + 1 + 1); // no compressed block yet
    expect(keysPerQuery(m, 7)).toBe(1 + 8 + 8); // block 0 = [0, 8) complete
    expect(keysPerQuery(m, 63)).toBe(15 + 24 + 16); // (64 − 8)/4 + 1 blocks, 3 × 8 selected, w 16
    expect(keysPerQuery(tinyDense(), 63)).toBe(64);
  });
});

describe('fp32 peaks of known GPUs', () => {
  it('matches the most specific name first, and knows nothing of others', () => {
    expect(knownFp32Peak('NVIDIA H100 80GB HBM3')?.tflops).toBe(66.9);
    expect(knownFp32Peak('NVIDIA H100 PCIe')?.tflops).toBe(51.2);
    expect(knownFp32Peak('NVIDIA H200')?.source).toBe('NVIDIA H200 SXM');
    expect(knownFp32Peak('NVIDIA GeForce RTX 3090')?.tflops).toBe(35.6);
    expect(knownFp32Peak('SwiftShader Device (Subzero)')).toBeNull();
  });
});

describe('NSA_GPU', () => {
  it('accepts auto, software and hardware; anything else names the variable', () => {
    expect(gpuPreferenceFromEnv({})).toBe('auto');
    expect(gpuPreferenceFromEnv({ NSA_GPU: 'hardware' })).toBe('hardware');
    expect(gpuPreferenceFromEnv({ NSA_GPU: 'software' })).toBe('software');
    expect(() => gpuPreferenceFromEnv({ NSA_GPU: 'cuda' })).toThrow(/NSA_GPU must be one of auto, software, hardware \(got 'cuda'\)/);
  });
});

describe('summary of a bundle run', () => {
  it('reduces the reports to counts, figures and side-by-side PyTorch rates', () => {
    const dir = newFolder('bundle-out');
    writeFileSync(join(dir, 'adapter.json'), JSON.stringify({ summary: 'nvidia / hopper / NVIDIA H100', fp32_peak: { tflops: 66.9 } }));
    writeFileSync(
      join(dir, 'gpu-tests.json'),
      JSON.stringify({
        numTotalTestSuites: 2,
        numPassedTests: 3,
        numFailedTests: 1,
        numPendingTests: 0,
        numTotalTests: 4,
        testResults: [
          {
            name: '/tmp/nsa-gpu-bundle/app/tests/kernels/matmul.test.ts',
            assertionResults: [{ status: 'failed', fullName: 'matmul big' }],
          },
        ],
      }),
    );
    writeFileSync(
      join(dir, 'bench.jsonl'),
      [
        '[gpu] adapter: not JSON, skipped',
        JSON.stringify({ kind: 'matmul', M: 4096, N: 4096, K: 4096, gflops: 15000, mfu: 0.2242 }),
        JSON.stringify({
          kind: 'dispatch',
          dispatches: 512,
          short_ms: 0.01,
          long_ms: 1.5,
          us_per_dispatch: 2.91234,
          timer: 'timestamp-query',
        }),
        JSON.stringify({
          kind: 'preset',
          preset: 'tiny',
          attention: 'dense',
          batch_size: 1,
          tokens_per_s: 123456.7,
          ms_per_step: 4.1,
          mfu: 0.01,
        }),
        JSON.stringify({ kind: 'kernels', preset: 'tiny', attention: 'dense', batch_size: 1, kernels: [{ kernel: 'matmul', share: 0.5 }] }),
        // The same preset at another batch (npm run bench's tiny@8): a row of its own.
        JSON.stringify({
          kind: 'preset',
          preset: 'tiny',
          attention: 'dense',
          batch_size: 8,
          tokens_per_s: 400000,
          ms_per_step: 10.2,
          mfu: 0.03,
        }),
        JSON.stringify({
          kind: 'kernels',
          preset: 'tiny',
          attention: 'dense',
          batch_size: 8,
          kernels: [{ kernel: 'attention', share: 0.25 }],
        }),
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'torch.json'),
      JSON.stringify({
        environment: { torch: '2.11' },
        results: [
          { preset: 'tiny', attention: 'dense', batch_size: 1, mode: 'sdpa', tokens_per_s: 99999 },
          { preset: 'tiny', attention: 'dense', batch_size: 8, mode: 'sdpa', tokens_per_s: 300000 },
        ],
      }),
    );
    writeFileSync(
      join(dir, 'bench-nsa.jsonl'),
      [
        JSON.stringify({
          kind: 'decode',
          T: 4096,
          nsa_ms: 0.5,
          dense_ms: 0.9,
          nsa_attention_ms: 0.2,
          dense_attention_ms: 0.6,
          nsa_over_dense_keys: 0.437,
          reads_match_formula: true,
        }),
        JSON.stringify({ kind: 'summary', decode_crossover: { T: 4096 } }),
      ].join('\n'),
    );
    const steps = join(dir, 'steps.tsv');
    writeFileSync(steps, 'adapter\t0\t2\ntests\t1\t60\n');
    const s = summarize(dir, steps);
    expect(s.adapter).toBe('nvidia / hopper / NVIDIA H100');
    expect(s.steps).toEqual([
      { name: 'adapter', exit: 0, seconds: 2 },
      { name: 'tests', exit: 1, seconds: 60 },
    ]);
    expect(s.tests).toMatchObject({ files: 1, passed: 3, failed: 1, total: 4, failed_tests: ['tests/kernels/matmul.test.ts: matmul big'] });
    expect(s.matmul).toEqual([{ size: '4096x4096x4096', gflops: 15000, mfu: 0.224 }]);
    expect(s.dispatch_us).toBe(2.91);
    expect(table(s)).toContain('one dispatch (in a chain of dependent ones): 2.91 µs');
    expect(s.presets).toMatchObject([
      { preset: 'tiny', batch_size: 1, tokens_per_s: 123000, torch_sdpa_tokens_per_s: 100000, top_kernels: ['matmul 50%'] },
      { preset: 'tiny', batch_size: 8, tokens_per_s: 400000, torch_sdpa_tokens_per_s: 300000, top_kernels: ['attention 25%'] },
    ]);
    expect(table(s)).toContain('tiny dense B=8: 400000 tokens/s, 10.2 ms/step, MFU 0.03');
    expect(s.decode).toEqual([
      {
        T: 4096,
        nsa_ms_per_token: 0.5,
        dense_ms_per_token: 0.9,
        nsa_attention_ms: 0.2,
        dense_attention_ms: 0.6,
        keys_ratio: 0.437,
        reads_match_formula: true,
      },
    ]);
    expect(s.nsa_summary).toMatchObject({ decode_crossover: { T: 4096 } });
    expect(testCounts(null)).toBeNull();
  });

  it('a golden recorded on this adapter is "recorded, unchecked", never a pass; the golden step says so', () => {
    const dir = newFolder('bundle-golden');
    const results = [
      { key: 'tiny/dense', outcome: 'match', problems: [] },
      { key: 'tiny/nsa', outcome: 'recorded', problems: [] },
    ];
    writeFileSync(join(dir, 'golden.json'), JSON.stringify({ results }));
    const steps = join(dir, 'steps.tsv');
    writeFileSync(steps, 'golden\t0\t30\n');
    const s = summarize(dir, steps);
    expect(s.golden.map((g: { outcome: string }) => g.outcome)).toEqual(['match', 'recorded, unchecked']);
    const text = table(s);
    expect(text).toContain('step golden: recorded 1, unchecked in 30 s');
    expect(text).not.toMatch(/step golden: ok/);
    expect(text).toContain('golden tiny/nsa: recorded, unchecked');
    // Every golden checked: the step is ok.
    writeFileSync(join(dir, 'golden.json'), JSON.stringify({ results: [results[0]] }));
    expect(table(summarize(dir, steps))).toContain('step golden: ok in 30 s');
  });

  it('the learn step: best accuracy per preset, mechanism and variant from the lines as they came, a cut run included', () => {
    const dir = newFolder('bundle-learn');
    const grid = (mechanism: string, last: number, mean: number) => ({
      kind: 'grid',
      preset: 'mqar-long',
      seqLen: 1024,
      chance: 1 / 256,
      steps: 4000,
      target: 0.95,
      mechanisms: [mechanism],
      keys_per_query: { [mechanism]: { last_query: last, mean } },
    });
    const evalLine = (mechanism: string, step: number, accuracy: number) => ({
      kind: 'eval',
      preset: 'mqar-long',
      mechanism,
      step,
      accuracy,
      sequence_accuracy: accuracy / 2,
      accuracy_by_answer: [accuracy, accuracy / 2, 0.12345],
      // (a passkey's field, on an MQAR line here: the summary carries what the line has)
      accuracy_by_depth: [
        { positions: [20, 467], sequences: 3, whole_keys: accuracy / 3, accuracy_by_answer: [accuracy, 0.5] },
        { positions: [468, 914], sequences: 0, whole_keys: null, accuracy_by_answer: null },
      ],
      // NSA's kernel counts of the step before (the WebGPU engine writes none for dense attention).
      ...(mechanism === 'nsa' && { keys_counted: { cmp: 60, sel: 40 + step / 100, win: 16 } }),
      // NSA's routing of the answers (none for dense attention).
      ...(mechanism === 'nsa' && {
        needle: {
          answers: 64,
          selected_by_layer: [accuracy, 0.25],
          selected_any: accuracy,
          accuracy_selected: 0.98765,
          accuracy_missed: 0.1,
        },
      }),
      seconds: step / 10,
    });
    const lines = [
      grid('nsa', 144, 111.25),
      grid('dense', 1024, 512.5),
      evalLine('nsa', 100, 0.5),
      evalLine('dense', 100, 0.96),
      evalLine('nsa', 200, 0.9),
      { kind: 'process', preset: 'mqar-long', mechanism: 'dense', exit: 0, seconds: 40, cut: false },
      evalLine('nsa', 300, 0.85),
      { kind: 'process', preset: 'mqar-long', mechanism: 'nsa', exit: 124, seconds: 430, cut: true },
    ];
    writeFileSync(join(dir, 'learn.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n{"kind":"eval", cut mid-line');
    const steps = join(dir, 'steps.tsv');
    writeFileSync(steps, 'adapter\t0\t1\nlearn\t124\t440\n');
    const s = summarize(dir, steps);
    expect(s.learn).toEqual([
      {
        preset: 'mqar-long',
        mechanism: 'nsa',
        accuracy: 0.9,
        sequence_accuracy: 0.45,
        accuracy_by_answer: [0.9, 0.45, 0.123], // the best evaluation's
        whole_keys_by_depth: [
          { positions: [20, 467], sequences: 3, whole_keys: 0.3 },
          { positions: [468, 914], sequences: 0, whole_keys: null },
        ],
        needle: { selected_any: 0.9, selected_by_layer: [0.9, 0.25], accuracy_selected: 0.988, accuracy_missed: 0.1 },
        best_step: 200,
        last_step: 300,
        steps_per_s: 10,
        steps_planned: 4000,
        target: 0.95,
        reached: false,
        chance: 0.00391,
        keys_last_query: 144,
        keys_mean_query: 111.3,
        keys_mean_vs_dense: 0.217,
        keys_counted_query: 119, // the last evaluation's (step 300): the run was cut before its run line
        keys_counted_vs_dense: 0.232,
        exit: 124,
        seconds: 430,
        cut: true,
      },
      expect.objectContaining({
        mechanism: 'dense',
        accuracy: 0.96,
        best_step: 100,
        reached: true,
        keys_mean_vs_dense: 1,
        keys_counted_query: null,
        needle: null,
        exit: 0,
      }),
    ]);
    const text = table(s);
    expect(text).toContain('step learn: CUT at its time cap (partial results kept) in 440 s');
    expect(text).toContain(
      'learn mqar-long nsa: 90.0 % (whole sequences 45.0 %; by answer 90.0 % / 45.0 % / 12.3 %; whole keys by needle position 20–467 30.0 %, 468–914 -; needle selected 90.0 % (accuracy 98.8 % where selected, 10.0 % where not)) at step 200 of 300 evaluated (4000 planned; 10 steps/s), target 95.0 % not reached, keys/query 111.3 (0.217 × dense), counted by the kernels 119 (0.232 × dense), exit 124 (cut at its cap) in 430 s',
    );
    // A run line (the run ended): its mean over every step replaces the last evaluation's count.
    writeFileSync(
      join(dir, 'learn.jsonl'),
      [...lines, { kind: 'run', preset: 'mqar-long', mechanism: 'nsa', keys_counted_mean_query: 110.5 }]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    expect(summarize(dir, steps).learn[0]).toMatchObject({ keys_counted_query: 110.5, keys_counted_vs_dense: 0.216 });
    // A variant (npm run learn --variant: other settings of one preset and mechanism) is a row of its
    // own, named in the table; the rows without one keep no variant field.
    const v = (l: Record<string, unknown>) => ({ ...l, variant: 'nsel5' });
    writeFileSync(
      join(dir, 'learn.jsonl'),
      [
        ...lines,
        v(grid('nsa', 160, 124.4)),
        v(evalLine('nsa', 100, 0.97)),
        { kind: 'process', preset: 'mqar-long', mechanism: 'nsa', variant: 'nsel5', exit: 0, seconds: 20, cut: false },
      ]
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n',
    );
    const withVariant = summarize(dir, steps);
    expect(withVariant.learn.map((r: Record<string, unknown>) => [r.mechanism, r.variant, r.accuracy, r.keys_last_query, r.exit])).toEqual([
      ['nsa', undefined, 0.9, 144, 124],
      ['dense', undefined, 0.96, 1024, 0],
      ['nsa', 'nsel5', 0.97, 160, 0],
    ]);
    expect(table(withVariant)).toContain('learn mqar-long nsa [nsel5]: 97.0 %');
    // No learn.jsonl: no learn field.
    expect('learn' in summarize(newFolder('bundle-none'), steps)).toBe(false);
  });
});
