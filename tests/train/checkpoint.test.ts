// The training checkpoint (CPU only): bit-exact round trips for the tiny preset and an NSA model
// with φ = mlp and per-branch K/V, the exact size, and every rejection naming file and field.
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import {
  CHECKPOINT_FORMAT,
  CHECKPOINT_VERSION,
  checkpointBytesFor,
  checkpointTensorBytes,
  decodeCheckpoint,
  encodeCheckpoint,
  MAX_CHECKPOINT_BYTES,
  type TrainingCheckpoint,
} from '../../src/train/checkpoint/checkpoint';
import { CheckpointFormatError, decodeSafetensors, encodeSafetensors, type NamedTensor } from '../../src/train/checkpoint/safetensors';
import { type RunConfig, validateRunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { StepMetrics } from '../../src/train/types';
import { rng } from '../helpers/compare';

const FILE = 'runs/x/checkpoint.safetensors';

function nsaConfig(): RunConfig {
  const c = preset('tiny');
  c.model.attention = 'nsa';
  c.model.nsa = { ...c.model.nsa!, phi: 'mlp', sharedKV: false };
  return c;
}

function makeCheckpoint(config: RunConfig, seed: number): TrainingCheckpoint {
  const r = rng(seed);
  const group = () =>
    new Map(
      paramSpecs(config.model).map((s) => [s.name, Float32Array.from({ length: s.shape.reduce((a, b) => a * b, 1) }, () => r() - 0.5)]),
    );
  const row = (step: number, loss: number): StepMetrics => ({
    step,
    loss,
    lr: 1e-3 * (step + 1),
    gradNorm: step === 2 ? Infinity : 0.5,
    tokensPerSecond: 1234.5,
    stepMs: 10,
    elapsedMs: 10 * (step + 1),
  });
  const metrics = [row(0, 5.5), row(1, 5.25), row(2, NaN)];
  metrics[1].nsa = {
    gateMean: [0.1, 0.2, 0.7],
    histogram: [3, 0, 1],
    invalid: 0,
    keysPerQuery: [3.5, 16.25, 4.875],
    perLayer: [{ gateMean: [0.1, 0.2, 0.7], invalid: 0 }],
  };
  return {
    config,
    state: { stepsDone: 3, batchesDrawn: 3 },
    params: group(),
    adamM: group(),
    adamV: group(),
    metrics,
    evals: [
      {
        step: 0,
        valLoss: 5.6,
        accuracy: 0.25,
        accuracyByAnswer: [0.5, 0, 0.25, 0.25],
        keysByDepth: [
          { from: 20, to: 467, sequences: 3, keysRight: 0 },
          { from: 468, to: 914, sequences: 5, keysRight: 1 },
        ],
        needleSelected: 0.375,
      },
      {
        step: 2,
        valLoss: -Infinity,
        accuracy: 0.5,
        accuracyByAnswer: [1, 0.25, 0.75, 0],
        keysByDepth: [
          { from: 20, to: 467, sequences: 0, keysRight: 0 },
          { from: 468, to: 914, sequences: 8, keysRight: 8 },
        ],
        needleSelected: 1,
      },
    ],
    reason: 'non-finite',
    savedAt: '2025-01-02T03:04:05.678Z',
  };
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function expectSameTensors(got: Map<string, Float32Array>, want: Map<string, Float32Array>): void {
  expect([...got.keys()]).toEqual([...want.keys()]);
  for (const [k, v] of want) expect(bits(got.get(k)!), k).toEqual(bits(v));
}

function expectRejected(bytes: Uint8Array, field: string, detail?: RegExp, maxBytes?: number): void {
  let result: TrainingCheckpoint | undefined;
  let caught: unknown;
  try {
    result = decodeCheckpoint(bytes, { file: FILE, maxBytes });
  } catch (e) {
    caught = e;
  }
  expect(result).toBeUndefined();
  expect(caught).toBeInstanceOf(CheckpointFormatError);
  const e = caught as CheckpointFormatError;
  expect(e.file).toBe(FILE);
  expect(e.field).toBe(field);
  expect(e.message.startsWith(FILE)).toBe(true);
  if (detail) expect(e.message).toMatch(detail);
}

const decodeRaw = (bytes: Uint8Array) =>
  decodeSafetensors(bytes, {
    file: FILE,
    maxBytes: MAX_CHECKPOINT_BYTES,
    allowF64: true,
    nonFiniteAllowed: (n) => /^(metrics|evals)\./.test(n),
  });

/** Re-encodes a valid file's tensors (history columns included) and metadata after `edit` (in the same tensor order), digests recomputed. */
function rewrite(bytes: Uint8Array, edit: (tensors: NamedTensor[], meta: Record<string, string>) => void): Uint8Array {
  const d = decodeRaw(bytes);
  const tensors: NamedTensor[] = [
    ...[...d.tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data })),
    ...[...d.f64].map(([name, t]) => ({ name, shape: t.shape, data: t.data, nonFinite: 'allowed' as const })),
  ];
  edit(tensors, d.metadata);
  return encodeSafetensors(tensors, d.metadata);
}

/** Rewrites the JSON header in place of the old one (padded again), keeping the data section. */
function rewriteHeader(bytes: Uint8Array, edit: (header: Record<string, Record<string, unknown>>) => void): Uint8Array {
  const n = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, Record<string, unknown>>;
  edit(header);
  const h = new TextEncoder().encode(JSON.stringify(header).padEnd(n + 64, ' ')); // 8 | (n + 64) since 8 | n
  const out = new Uint8Array(8 + h.length + bytes.length - 8 - n);
  new DataView(out.buffer).setUint32(0, h.length, true);
  out.set(h, 8);
  out.set(bytes.subarray(8 + n), 8 + h.length);
  return out;
}

function headerOf(bytes: Uint8Array): { n: number; header: Record<string, { data_offsets: [number, number] }> } {
  const n = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  return {
    n,
    header: JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, { data_offsets: [number, number] }>,
  };
}

describe('checkpoint round trip', () => {
  for (const [label, config] of [
    ['tiny preset (dense)', preset('tiny')],
    ["NSA, φ 'mlp', per-branch K/V", nsaConfig()],
  ] as const) {
    it(`${label}: bit-exact tensors, config, state, metrics (NaN/±Infinity kept), evals; size = checkpointBytesFor`, () => {
      expect(validateRunConfig(config)).toEqual([]);
      const c = makeCheckpoint(config, 11);
      const bytes = encodeCheckpoint(c);
      expect(bytes.length).toBe(checkpointBytesFor(c));
      expect(bytes.length).toBeGreaterThan(checkpointTensorBytes(config));
      expect(checkpointTensorBytes(config)).toBe(3 * 4 * [...c.params.values()].reduce((a, t) => a + t.length, 0));

      const d = decodeCheckpoint(bytes, { file: FILE });
      expect(d.config).toEqual(config);
      expect(d.state).toEqual(c.state);
      expect(d.metrics).toEqual(c.metrics);
      expect(Number.isNaN(d.metrics[2].loss)).toBe(true);
      expect(d.metrics[2].gradNorm).toBe(Infinity);
      expect(d.evals).toEqual(c.evals);
      expect(d.evals[1].valLoss).toBe(-Infinity);
      expect(d.reason).toBe('non-finite');
      expect(d.savedAt).toBe(c.savedAt);
      expectSameTensors(d.params, c.params);
      expectSameTensors(d.adamM, c.adamM);
      expectSameTensors(d.adamV, c.adamV);

      const raw = decodeRaw(bytes);
      const specs = paramSpecs(config.model).map((s) => s.name);
      expect([...raw.tensors.keys()]).toEqual(['param', 'adam_m', 'adam_v'].flatMap((g) => specs.map((s) => `${g}.${s}`)));
      expect(raw.digested).toBe(true);
      expect([...raw.f64.keys()].filter((k) => !k.startsWith('metrics.nsa.'))).toEqual([
        'metrics.step',
        'metrics.loss',
        'metrics.lr',
        'metrics.grad_norm',
        'metrics.tokens_per_second',
        'metrics.step_ms',
        'metrics.elapsed_ms',
        'evals.step',
        'evals.val_loss',
        'evals.accuracy',
        'evals.has_accuracy',
        'evals.accuracy_by_answer',
        'evals.keys_by_depth',
        'evals.needle_selected',
      ]);
      expect(raw.f64.get('evals.accuracy_by_answer')!.shape).toEqual([2, 4]);
      expect(raw.f64.get('evals.keys_by_depth')!.shape).toEqual([2, 2, 4]);
      expect(raw.f64.get('metrics.loss')!.shape).toEqual([3]);
    });
  }

  it('evaluations without per-answer accuracy (text runs, histories before it) write no column and read back without it', () => {
    const c = makeCheckpoint(preset('tiny'), 3);
    c.evals = [
      { step: 0, valLoss: 5.6 },
      { step: 2, valLoss: 5.5, accuracy: 0.5 },
    ];
    const bytes = encodeCheckpoint(c);
    expect(decodeRaw(bytes).f64.has('evals.accuracy_by_answer')).toBe(false);
    expect(decodeRaw(bytes).f64.has('evals.keys_by_depth')).toBe(false);
    expect(decodeRaw(bytes).f64.has('evals.needle_selected')).toBe(false);
    expect(decodeCheckpoint(bytes, { file: FILE }).evals).toEqual(c.evals);
    // Evaluations that disagree on the answer count (none in a run) keep their accuracy only.
    c.evals = [
      { step: 0, valLoss: 5.6, accuracy: 0.5, accuracyByAnswer: [0.5] },
      { step: 2, valLoss: 5.5, accuracy: 0.5, accuracyByAnswer: [0.5, 0.5] },
    ];
    expect(decodeCheckpoint(encodeCheckpoint(c), { file: FILE }).evals).toEqual(c.evals.map(({ accuracyByAnswer: _, ...e }) => e));
  });

  it('the NSA model has more tensors than the dense one (per-branch K/V, gates, compression MLPs)', () => {
    const dense = paramSpecs(preset('tiny').model).map((s) => s.name);
    const nsa = paramSpecs(nsaConfig().model).map((s) => s.name);
    expect(nsa.length).toBeGreaterThan(dense.length);
    for (const n of ['l0.wk_cmp', 'l1.wv_win', 'l0.wg', 'l1.cmp_mlp_v.w2']) expect(nsa).toContain(n);
  });

  it('writes the format, version and reason as metadata', () => {
    const meta = decodeRaw(encodeCheckpoint(makeCheckpoint(preset('tiny'), 1))).metadata;
    expect(meta.format).toBe(CHECKPOINT_FORMAT);
    expect(meta.version).toBe(String(CHECKPOINT_VERSION));
    // State, not history: the metrics live in tensors (the digests, key xxh32, are not shown).
    expect(Object.keys(meta).sort()).toEqual(['config', 'format', 'reason', 'saved_at', 'state', 'version']);
  });

  it('encodeCheckpoint refuses a missing or extra tensor and a tensor of the wrong size', () => {
    const c = makeCheckpoint(preset('tiny'), 2);
    const missing = { ...c, adamV: new Map(c.adamV) };
    missing.adamV.delete('l1.w2');
    expect(() => encodeCheckpoint(missing)).toThrow(/adamV has no tensor 'l1.w2'/);
    const extra = { ...c, params: new Map(c.params).set('bogus', new Float32Array(1)) };
    expect(() => encodeCheckpoint(extra)).toThrow(/bogus/);
    const short = { ...c, adamM: new Map(c.adamM).set('wte', new Float32Array(3)) };
    expect(() => encodeCheckpoint(short)).toThrow(/adam_m.wte/);
  });
});

describe('decodeCheckpoint rejects', () => {
  const good = encodeCheckpoint(makeCheckpoint(preset('tiny'), 5));

  it('a truncated file, cut at several points (field: header length, or the first tensor past the cut)', () => {
    const { n, header } = headerOf(good);
    const cuts = [0, 5, 7, 8, 100, 8 + n - 1, 8 + n, 8 + n + 1, 8 + n + 4 * 256 * 64 + 3, Math.floor(good.length / 2), good.length - 1];
    for (const cut of cuts) {
      let field = 'header length';
      if (cut >= 8 + n) {
        const dataBytes = cut - 8 - n;
        field = Object.keys(header).find((k) => k !== '__metadata__' && header[k].data_offsets[1] > dataBytes)!;
      }
      expectRejected(good.slice(0, cut), field);
    }
  });

  it('a file larger than maxBytes', () => {
    expectRejected(good, 'size', /limit/, good.length - 1);
    expect(decodeCheckpoint(good, { file: FILE, maxBytes: good.length }).state.stepsDone).toBe(3);
  });

  it('a wrong dtype (F16), naming the tensor and the dtype', () => {
    const f16 = rewriteHeader(good, (h) => {
      h['adam_m.l0.wq'].dtype = 'F16';
    });
    expectRejected(f16, 'adam_m.l0.wq', /F16/);
  });

  it('a tensor of another shape, giving the expected and found shapes', () => {
    const bytes = rewrite(good, (ts) => {
      const t = ts.find((x) => x.name === 'param.l1.wq')!;
      t.shape = [32, 128]; // same element count as [64, 64]
    });
    expectRejected(bytes, 'param.l1.wq', /expected shape \[64, 64\], found \[32, 128\]/);
  });

  it('a missing tensor and an extra tensor', () => {
    expectRejected(
      rewrite(good, (ts) =>
        ts.splice(
          ts.findIndex((x) => x.name === 'adam_v.final_norm'),
          1,
        ),
      ),
      'adam_v.final_norm',
      /missing/,
    );
    expectRejected(
      rewrite(good, (ts) => ts.push({ name: 'param.l2.wq', shape: [3], data: new Float32Array(3) })),
      'param.l2.wq',
      /unexpected/,
    );
  });

  it('the config of another model (dim changed: the first tensor whose shape differs is named)', () => {
    const bytes = rewrite(good, (_ts, meta) => {
      const c = JSON.parse(meta.config) as RunConfig;
      c.model.dim = 72;
      expect(validateRunConfig(c)).toEqual([]);
      meta.config = JSON.stringify(c);
    });
    expectRejected(bytes, 'param.wte', /expected shape \[256, 72\], found \[256, 64\]/);
  });

  it('an invalid config (dim 0 → config.model.dim) and a config that is not JSON', () => {
    const dim0 = rewrite(good, (_ts, meta) => {
      const c = JSON.parse(meta.config) as RunConfig;
      c.model.dim = 0;
      meta.config = JSON.stringify(c);
    });
    expectRejected(dim0, 'config.model.dim', /positive integer/);
    expectRejected(
      rewrite(good, (_ts, meta) => {
        meta.config = '{"model":';
      }),
      'config',
      /JSON/,
    );
    expectRejected(
      rewrite(good, (_ts, meta) => {
        meta.config = '{"model":{},"train":{}}';
      }),
      'config.data',
    );
  });

  it('a wrong format string, a future version and an unknown version', () => {
    const withMeta = (key: string, value: string) =>
      rewrite(good, (_ts, meta) => {
        meta[key] = value;
      });
    expectRejected(withMeta('format', 'something-else'), 'format', /'something-else'/);
    expectRejected(withMeta('version', String(CHECKPOINT_VERSION + 1)), 'version', /newer build; this build reads versions 1 and 2/);
    expectRejected(withMeta('version', 'one'), 'version');
    expectRejected(
      rewrite(good, (_ts, meta) => {
        delete meta.format;
      }),
      'format',
      /missing/,
    );
  });

  it('a bad state, and bad history columns (missing, of another length, a fractional step, an F32 column)', () => {
    const withMeta = (key: string, value: string) =>
      rewrite(good, (_ts, meta) => {
        meta[key] = value;
      });
    expectRejected(withMeta('state', '{"stepsDone":301,"batchesDrawn":5}'), 'state.stepsDone', /beyond config.train.steps \(300\)/);
    expectRejected(withMeta('state', '{"stepsDone":1,"batchesDrawn":-1}'), 'state.batchesDrawn');
    expectRejected(withMeta('state', '{"stepsDone":1.5,"batchesDrawn":1}'), 'state.stepsDone');
    const edit = (name: string, f: (t: NamedTensor, ts: NamedTensor[]) => void) =>
      rewrite(good, (ts) => {
        f(
          ts.find((t) => t.name === name)!,
          ts,
        );
      });
    expectRejected(
      edit('evals.val_loss', (t, ts) => ts.splice(ts.indexOf(t), 1)),
      'evals.val_loss',
      /history column missing/,
    );
    expectRejected(
      edit('metrics.lr', (t) => {
        t.shape = [2];
        t.data = t.data.slice(0, 2);
      }),
      'metrics.lr',
      /expected shape \[3\], found \[2\]/,
    );
    expectRejected(
      edit('metrics.step', (t) => {
        t.data[1] = 1.5;
      }),
      'metrics.step',
      /1\.5 is not an integer/,
    );
    expectRejected(
      edit('evals.has_accuracy', (t) => {
        t.data[0] = 2;
      }),
      'evals.has_accuracy',
    );
    expectRejected(
      edit('metrics.loss', (t) => {
        t.data = Float32Array.from(t.data, (x) => (Number.isFinite(x) ? x : 0));
      }),
      'metrics.loss',
      /F64/,
    );
    expectRejected(
      edit('evals.accuracy_by_answer', (t) => {
        t.shape = [8];
      }),
      'evals.accuracy_by_answer',
      /expected shape \[2, \*\], found \[8\]/,
    );
    expectRejected(
      edit('evals.keys_by_depth', (t) => {
        t.shape = [2, 4, 2];
      }),
      'evals.keys_by_depth',
      /expected shape \[2, \*, 4\], found \[2, 4, 2\]/,
    );
    expectRejected(
      edit('evals.keys_by_depth', (t) => {
        t.data = Float64Array.from(t.data as Float64Array, (x, i) => (i === 7 ? 9 : x)); // 9 keys right of 5
      }),
      'evals.keys_by_depth',
      /range 1: expected from ≤ to and keys right ≤ keys, found \[468, 914\], 9 of 5/,
    );
    expectRejected(
      edit('evals.keys_by_depth', (t) => {
        t.data = Float64Array.from(t.data as Float64Array, (x, i) => (i === 2 ? 2.5 : x));
      }),
      'evals.keys_by_depth',
      /value 2: 2.5 is not an integer/,
    );
    expectRejected(
      edit('evals.needle_selected', (t) => {
        t.data = Float64Array.from([0.5, 1.25]);
      }),
      'evals.needle_selected',
      /row 1: expected a share in \[0, 1\], found 1.25/,
    );
    expectRejected(
      rewrite(good, (ts) => ts.push({ name: 'metrics.bogus', shape: [3], data: new Float64Array(3) })),
      'metrics.bogus',
      /unexpected history column/,
    );
  });
});
