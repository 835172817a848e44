// Checkpoint integrity (CPU only): version-1 files (history in the header, no digests, written here
// byte for byte the old way) still load; NaN/±Infinity in a parameter or AdamW moment is refused on
// read and never written, naming file, tensor and first bad index; every flipped bit in tensor data
// is refused naming the tensor; a mutation campaign (bit flips, truncations, header edits, injected
// NaN) has no mutant silently accepted; a history of 10^6 metric rows encodes and decodes.
import { describe, expect, it } from 'vitest';

import { paramSpecs } from '../../src/definitions/params';
import {
  CheckpointFormatError,
  decodeCheckpoint,
  encodeCheckpoint,
  NonFiniteTensorError,
  type TrainingCheckpoint,
} from '../../src/train/checkpoint/checkpoint';
import { xxh32 } from '../../src/train/checkpoint/safetensors';
import type { RunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import type { StepMetrics } from '../../src/train/types';
import { rng } from '../helpers/compare';

const FILE = 'runs/m/checkpoint.safetensors';

function nsaConfig(): RunConfig {
  const c = preset('tiny');
  c.model.attention = 'nsa';
  return c;
}

function makeCheckpoint(config: RunConfig, seed: number, rows = 4): TrainingCheckpoint {
  const r = rng(seed);
  const group = () =>
    new Map(
      paramSpecs(config.model).map((s) => [s.name, Float32Array.from({ length: s.shape.reduce((a, b) => a * b, 1) }, () => r() - 0.5)]),
    );
  const nsa = config.model.attention === 'nsa';
  const metrics: StepMetrics[] = Array.from({ length: rows }, (_, step) => ({
    step,
    loss: step === 2 ? NaN : 5 - step / 10,
    lr: 1e-3 * (step + 1),
    gradNorm: step === 3 ? -Infinity : 0.5,
    tokensPerSecond: 1000 + step,
    stepMs: 10,
    elapsedMs: 10 * (step + 1),
    ...(nsa
      ? {
          nsa: {
            gateMean: [0.1, 0.2, 0.7] as [number, number, number],
            histogram: [3, 0, step],
            invalid: 0,
            perLayer: [
              { gateMean: [0.1, 0.2, 0.7] as [number, number, number], invalid: 0 },
              { gateMean: [0.3, 0.3, 0.4] as [number, number, number], invalid: 0 },
            ],
          },
        }
      : {}),
  }));
  return {
    config,
    state: { stepsDone: rows, batchesDrawn: rows },
    params: group(),
    adamM: group(),
    adamV: group(),
    metrics,
    evals: [
      { step: 0, valLoss: 5.6 },
      { step: 2, valLoss: Infinity, accuracy: 0.25 },
    ],
    reason: 'interval',
    savedAt: '2026-01-02T03:04:05.678Z',
  };
}

/** A version-1 checkpoint exactly as builds before version 2 wrote it: history as JSON in the metadata, no digests, F32 only. */
function writeVersion1(c: TrainingCheckpoint): Uint8Array {
  const replacer = (_k: string, v: unknown): unknown => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v);
  const metadata = {
    format: 'nsa-playground-checkpoint',
    version: '1',
    config: JSON.stringify(c.config),
    state: JSON.stringify({ stepsDone: c.state.stepsDone, batchesDrawn: c.state.batchesDrawn }),
    metrics: JSON.stringify(c.metrics, replacer),
    evals: JSON.stringify(c.evals, replacer),
    reason: c.reason,
    saved_at: c.savedAt,
  };
  const parts = [`"__metadata__":${JSON.stringify(metadata)}`];
  const datas: Float32Array[] = [];
  let offset = 0;
  for (const [prefix, map] of [
    ['param', c.params],
    ['adam_m', c.adamM],
    ['adam_v', c.adamV],
  ] as const)
    for (const s of paramSpecs(c.config.model)) {
      const data = map.get(s.name)!;
      parts.push(
        `${JSON.stringify(`${prefix}.${s.name}`)}:${JSON.stringify({ dtype: 'F32', shape: s.shape, data_offsets: [offset, offset + 4 * data.length] })}`,
      );
      offset += 4 * data.length;
      datas.push(data);
    }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const n = Math.ceil(json.length / 8) * 8;
  const out = new Uint8Array(8 + n + offset).fill(0x20, 8, 8 + n);
  new DataView(out.buffer).setUint32(0, n, true);
  out.set(json, 8);
  let pos = 8 + n;
  for (const d of datas) {
    out.set(new Uint8Array(d.buffer, d.byteOffset, d.byteLength), pos);
    pos += d.byteLength;
  }
  return out;
}

const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function expectSame(d: TrainingCheckpoint, c: TrainingCheckpoint): void {
  expect(d.config).toEqual(c.config);
  expect(d.state).toEqual(c.state);
  expect(d.metrics).toEqual(c.metrics);
  expect(d.evals).toEqual(c.evals);
  expect([d.reason, d.savedAt]).toEqual([c.reason, c.savedAt]);
  for (const g of ['params', 'adamM', 'adamV'] as const)
    for (const [k, v] of c[g]) expect(bits(d[g].get(k)!), `${g}.${k}`).toEqual(bits(v));
}

/** The refusal of decoding `bytes` (undefined when it decodes). */
function refusal(bytes: Uint8Array): CheckpointFormatError | undefined {
  try {
    decodeCheckpoint(bytes, { file: FILE });
  } catch (e) {
    if (e instanceof CheckpointFormatError) return e;
    throw new Error(`not a CheckpointFormatError: ${String(e)}`);
  }
  return undefined;
}

/** The header of an encoded file: its length and its tensors' absolute byte ranges. */
function layout(bytes: Uint8Array): { n: number; ranges: Array<{ name: string; begin: number; end: number }> } {
  const n = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<string, { data_offsets: [number, number] }>;
  const ranges = Object.entries(header)
    .filter(([k]) => k !== '__metadata__')
    .map(([name, e]) => ({ name, begin: 8 + n + e.data_offsets[0], end: 8 + n + e.data_offsets[1] }));
  return { n, ranges };
}

describe('XXH32 (the digest)', () => {
  it('matches the reference test vectors, aligned and unaligned', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(xxh32(new Uint8Array(0))).toBe('02cc5d05');
    expect(xxh32(enc('a'))).toBe('550d7456');
    expect(xxh32(enc('abc'))).toBe('32d153ff');
    const text = enc('Nobody inspects the spammish repetition');
    expect(xxh32(text)).toBe('e2293b2f');
    const host = new Uint8Array(text.length + 3);
    host.set(text, 3);
    expect(xxh32(host.subarray(3))).toBe('e2293b2f');
  });
});

describe('version-1 checkpoints (history in the header, no digests) still load', () => {
  for (const [label, config] of [
    ['dense', preset('tiny')],
    ['NSA', nsaConfig()],
  ] as const)
    it(`${label}: the old layout decodes to the same checkpoint, and re-encodes as version 2 that decodes the same`, () => {
      const c = makeCheckpoint(config, 3);
      const v1 = writeVersion1(c);
      const d = decodeCheckpoint(v1, { file: FILE });
      expectSame(d, c);
      const v2 = encodeCheckpoint(d);
      expectSame(decodeCheckpoint(v2, { file: FILE }), c);
    });
});

describe('version-1 history rows are checked as version 2 stores them', () => {
  it('a row with a non-number field, or NSA statistics of another width, is refused naming the row', () => {
    const c = makeCheckpoint(nsaConfig(), 4);
    const bad = (edit: (rows: StepMetrics[]) => void) => {
      const rows = structuredClone(c.metrics);
      edit(rows);
      return refusal(writeVersion1({ ...c, metrics: rows }));
    };
    const shorter = bad((rows) => rows[1].nsa!.histogram.pop());
    expect([shorter?.file, shorter?.field]).toEqual([FILE, 'metrics[1].nsa']);
    expect(shorter!.message).toMatch(/2 histogram bins and 2 layers, earlier rows 3 and 2/);
    expect(bad((rows) => ((rows[2].nsa!.perLayer[0] as { invalid: unknown }).invalid = 'x'))?.field).toBe('metrics[2].nsa.perLayer');
    expect(bad((rows) => ((rows[0] as unknown as { lr: unknown }).lr = 'fast'))?.field).toBe('metrics[0].lr');
  });
});

describe('NaN/±Infinity in a parameter or AdamW moment', () => {
  const c = makeCheckpoint(preset('tiny'), 5);
  for (const [group, key, value, index] of [
    ['param', 'params', NaN, 0],
    ['adam_m', 'adamM', Infinity, 77],
    ['adam_v', 'adamV', -Infinity, 4095],
  ] as const) {
    it(`${group}: refused on read (a version-1 file) naming file, tensor and index; never written`, () => {
      const bad = { ...c, [key]: new Map(c[key]) } as TrainingCheckpoint;
      const t = Float32Array.from(c[key].get('l0.wq')!);
      t[index] = value;
      bad[key].set('l0.wq', t);
      const e = refusal(writeVersion1(bad));
      expect(e).toBeInstanceOf(NonFiniteTensorError);
      expect([e!.file, e!.field, (e as NonFiniteTensorError).index]).toEqual([FILE, `${group}.l0.wq`, index]);
      expect(e!.message).toContain(
        `${FILE}: ${group}.l0.wq: holds ${value} at index ${index} ([${Math.floor(index / 64)}, ${index % 64}])`,
      );

      let thrown: unknown;
      try {
        encodeCheckpoint(bad, { file: FILE });
      } catch (w) {
        thrown = w;
      }
      expect(thrown).toBeInstanceOf(NonFiniteTensorError);
      expect((thrown as NonFiniteTensorError).message).toMatch(
        new RegExp(`^${FILE}: ${group}\\.l0\\.wq: holds .* at index ${index} .*never written`),
      );
    });
  }

  it('the history keeps NaN/±Infinity (a non-finite loss is a fact of the run)', () => {
    const d = decodeCheckpoint(encodeCheckpoint(c), { file: FILE });
    expect(Number.isNaN(d.metrics[2].loss)).toBe(true);
    expect(d.metrics[3].gradNorm).toBe(-Infinity);
    expect(d.evals[1].valLoss).toBe(Infinity);
  });
});

describe('digests: a flipped bit in any tensor is refused naming the tensor', () => {
  it('64 random bits in the data section (parameters, moments and history columns), each refused naming the tensor that holds it', () => {
    const good = encodeCheckpoint(makeCheckpoint(nsaConfig(), 9));
    const { ranges } = layout(good);
    const r = rng(17);
    const named = new Set<string>();
    const start = ranges[0].begin;
    // Every tensor once, then random positions anywhere in the data.
    const positions = [...ranges.filter((x) => x.end > x.begin).map((x) => x.begin + Math.floor(r() * (x.end - x.begin)))];
    while (positions.length < ranges.length + 64) positions.push(start + Math.floor(r() * (good.length - start)));
    for (const pos of positions) {
      const bad = good.slice();
      bad[pos] ^= 1 << Math.floor(r() * 8);
      const holder = ranges.find((x) => pos >= x.begin && pos < x.end)!.name;
      const e = refusal(bad);
      expect(e, `byte ${pos} (${holder})`).toBeDefined();
      expect([e!.file, e!.field]).toEqual([FILE, holder]);
      named.add(holder);
    }
    expect(named.size).toBeGreaterThanOrEqual(ranges.filter((x) => x.end > x.begin).length);
    expect([...named].some((n) => n.startsWith('metrics.'))).toBe(true);
  });

  it('a metadata value changed in place is refused naming its key (__metadata__.<key>)', () => {
    const good = encodeCheckpoint(makeCheckpoint(preset('tiny'), 2));
    const { n } = layout(good);
    const header = new TextDecoder().decode(good.subarray(8, 8 + n));
    expect(/^[\x20-\x7e]*$/.test(header)).toBe(true); // ASCII: text index = byte index
    const at = 8 + header.indexOf('\\"lrMax\\":') + '\\"lrMax\\":'.length; // a digit of config.train.lrMax
    const bad = good.slice();
    bad[at] = bad[at] === 0x31 ? 0x32 : 0x31;
    const e = refusal(bad);
    expect([e?.file, e?.field]).toEqual([FILE, '__metadata__.config']);
    expect(e!.message).toMatch(/XXH32.*changed after it was written/);
  });
});

type Outcome = 'refused' | 'identical';

describe('mutation campaign: no corrupt or non-finite checkpoint is silently accepted', () => {
  it('≥ 300 mutants of a real NSA checkpoint: bit flips (header and data), truncations, header edits, NaN/Inf injected', () => {
    const c = makeCheckpoint(nsaConfig(), 21, 6);
    const good = encodeCheckpoint(c);
    const { n, ranges } = layout(good);
    const r = rng(2026);
    const pick = (k: number) => Math.floor(r() * k);
    const tally = new Map<string, Record<Outcome, number>>();
    const silent: string[] = [];
    const run = (kind: string, bytes: Uint8Array) => {
      const t = tally.get(kind) ?? { refused: 0, identical: 0 };
      tally.set(kind, t);
      const e = refusal(bytes);
      if (e) {
        if (e.file !== FILE || !e.field || !e.message.startsWith(`${FILE}: ${e.field}: `))
          silent.push(`${kind}: badly named refusal ${e.message}`);
        t.refused++;
        return;
      }
      // Accepted: only if it decodes to exactly the checkpoint written.
      try {
        expectSame(decodeCheckpoint(bytes, { file: FILE }), c);
        t.identical++;
      } catch {
        silent.push(`${kind}: accepted with a different meaning`);
      }
    };
    const flip = (lo: number, hi: number) => {
      const b = good.slice();
      b[lo + pick(hi - lo)] ^= 1 << pick(8);
      return b;
    };
    for (let i = 0; i < 120; i++) run('bit flip in tensor data', flip(8 + n, good.length));
    for (let i = 0; i < 100; i++) run('bit flip in the header', flip(0, 8 + n));
    for (let i = 0; i < 40; i++) run('truncation', good.slice(0, pick(good.length)));
    const text = new TextDecoder().decode(good.subarray(8, 8 + n));
    const edits: Array<(h: Record<string, Record<string, unknown>>) => void> = [
      (h) => (h.__metadata__.state = '{"stepsDone":5,"batchesDrawn":6}'),
      (h) => (h.__metadata__.reason = 'final'),
      (h) => (h.__metadata__.extra = 'x'),
      (h) => delete h.__metadata__.xxh32,
      (h) => {
        const e = h[ranges[pick(ranges.length)].name];
        e.shape = [...(e.shape as number[]), 1];
      },
      (h) => {
        const a = ranges[pick(ranges.length)].name;
        const b = ranges[pick(ranges.length)].name;
        [h[a].data_offsets, h[b].data_offsets] = [h[b].data_offsets, h[a].data_offsets];
      },
      (h) => (h[ranges[pick(ranges.length)].name].dtype = 'F16'),
      (h) => {
        const cfg = JSON.parse(h.__metadata__.config as string) as RunConfig;
        cfg.train.lrMax *= 2;
        h.__metadata__.config = JSON.stringify(cfg);
      },
    ];
    for (let i = 0; i < 40; i++) {
      const h = JSON.parse(text) as Record<string, Record<string, unknown>>;
      edits[i % edits.length](h);
      const json = new TextEncoder().encode(JSON.stringify(h));
      const m = Math.ceil(json.length / 8) * 8;
      const out = new Uint8Array(8 + m + good.length - 8 - n).fill(0x20, 8, 8 + m);
      new DataView(out.buffer).setUint32(0, m, true);
      out.set(json, 8);
      out.set(good.subarray(8 + n), 8 + m);
      run('header edit', out);
    }
    const tensors = ranges.filter((x) => /^(param|adam_m|adam_v)\./.test(x.name));
    for (let i = 0; i < 40; i++) {
      const t = tensors[pick(tensors.length)];
      const b = good.slice();
      const at = t.begin + 4 * pick((t.end - t.begin) / 4);
      new DataView(b.buffer).setFloat32(at, [NaN, Infinity, -Infinity][i % 3], true);
      run('NaN/±Inf injected', b);
    }
    const total = [...tally.values()].reduce((a, t) => a + t.refused + t.identical, 0);
    console.log(
      `mutation campaign: ${total} mutants; ` +
        [...tally].map(([k, t]) => `${k}: ${t.refused} refused, ${t.identical} decoded identical`).join('; ') +
        `; silently accepted: ${silent.length}`,
    );
    expect(silent).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(300);
    expect(tally.get('bit flip in tensor data')!.refused).toBe(120);
    expect(tally.get('NaN/±Inf injected')!.refused).toBe(40);
  });
});

describe('a long run: 10^6 metric rows', () => {
  it('encodes and decodes (history in tensors, a header of a few KB), rows intact', () => {
    const c = makeCheckpoint(preset('tiny'), 1, 0);
    const R = 1_000_000;
    c.metrics = Array.from({ length: R }, (_, step) => ({
      step,
      loss: step === 123_456 ? NaN : 5 / (1 + step / 1000),
      lr: 1e-3,
      gradNorm: 0.5 + (step % 7),
      tokensPerSecond: 1e5,
      stepMs: 1.5,
      elapsedMs: 1.5 * step,
    }));
    c.evals = Array.from({ length: R / 100 }, (_, i) => ({ step: 100 * i, valLoss: 4 + 1 / (1 + i) }));
    c.state = { stepsDone: R, batchesDrawn: R };
    c.config.train.steps = R;
    const t0 = performance.now();
    const bytes = encodeCheckpoint(c);
    const t1 = performance.now();
    const d = decodeCheckpoint(bytes, { file: FILE });
    const t2 = performance.now();
    const headerBytes = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
    console.log(
      `10^6 metric rows + 10^4 evals (tiny): ${(bytes.length / 2 ** 20).toFixed(1)} MiB, header ${headerBytes} B; encode ${(t1 - t0).toFixed(0)} ms, decode ${(t2 - t1).toFixed(0)} ms`,
    );
    expect(headerBytes).toBeLessThan(64 * 1024);
    expect(d.metrics.length).toBe(R);
    expect(d.evals.length).toBe(R / 100);
    for (const i of [0, 1, 123_456, 999_999]) expect(d.metrics[i]).toEqual(c.metrics[i]);
    expect(Number.isNaN(d.metrics[123_456].loss)).toBe(true);
    expect(d.evals.at(-1)).toEqual(c.evals.at(-1));
  });
});
