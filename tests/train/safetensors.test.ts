// The safetensors layout (CPU only): exact bytes of a hand-built file, round trips (bit-exact,
// 0-element and odd-sized tensors, unaligned input), and every rejection with its field.
import { describe, expect, it } from 'vitest';

import {
  CheckpointFormatError,
  decodeSafetensors,
  encodeSafetensors,
  MAX_HEADER_BYTES,
  type NamedTensor,
  NonFiniteTensorError,
  safetensorsBytes,
} from '../../src/train/checkpoint/safetensors';
import { rng } from '../helpers/compare';

const FILE = 'fixture.safetensors';
const opts = { file: FILE, maxBytes: 1 << 30, nonFiniteAllowed: () => true };

/** A raw file: u64 LE header length, the header text as given (no padding), then the data bytes. */
function rawFile(header: string, data: ArrayLike<number> = []): Uint8Array {
  const h = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + h.length + data.length);
  new DataView(out.buffer).setUint32(0, h.length, true);
  out.set(h, 8);
  out.set(data, 8 + h.length);
  return out;
}

/** A one-tensor header with the given entry (data section of `dataBytes` zero bytes). */
const oneTensor = (entry: unknown, dataBytes: number) => rawFile(JSON.stringify({ t: entry }), new Uint8Array(dataBytes));

function expectFormatError(f: () => unknown, field: string, detail?: RegExp): CheckpointFormatError {
  let result: unknown;
  let caught: unknown;
  try {
    result = f();
  } catch (e) {
    caught = e;
  }
  expect(result).toBeUndefined();
  expect(caught).toBeInstanceOf(CheckpointFormatError);
  const e = caught as CheckpointFormatError;
  expect(e.name).toBe('CheckpointFormatError');
  expect(e.file).toBe(FILE);
  expect(e.field).toBe(field);
  expect(e.message.startsWith(`${FILE}: `)).toBe(true);
  expect(e.message).toContain(field);
  if (detail) expect(e.message).toMatch(detail);
  return e;
}

const bits = (a: Float32Array | Float64Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

/** Random tensors with arbitrary bit patterns (NaN payloads, infinities, -0 included). */
function randomTensors(shapes: number[][], seed: number): NamedTensor[] {
  const r = rng(seed);
  return shapes.map((shape, i) => {
    const u = new Uint32Array(shape.reduce((a, b) => a * b, 1));
    for (let j = 0; j < u.length; j++) u[j] = Math.floor(r() * 2 ** 32);
    return { name: `t${i}.w`, shape, data: new Float32Array(u.buffer), nonFinite: 'allowed' as const };
  });
}

describe('encodeSafetensors: the exact layout', () => {
  it('writes u64 LE header length, the JSON header padded with spaces to a multiple of 8, then LE f32 data in order', () => {
    const bytes = encodeSafetensors(
      [
        { name: 'a', shape: [2], data: new Float32Array([1, -2]) },
        { name: 'b', shape: [1, 1], data: new Float32Array([0.5]) },
      ],
      { k: 'v' },
      { digests: false },
    );
    const json =
      '{"__metadata__":{"k":"v"},' +
      '"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' +
      '"b":{"dtype":"F32","shape":[1,1],"data_offsets":[8,12]}}';
    const n = Math.ceil(json.length / 8) * 8;
    const expected = [
      ...[n & 0xff, n >> 8, 0, 0, 0, 0, 0, 0],
      ...new TextEncoder().encode(json.padEnd(n, ' ')),
      ...[0x00, 0x00, 0x80, 0x3f], // 1.0
      ...[0x00, 0x00, 0x00, 0xc0], // -2.0
      ...[0x00, 0x00, 0x00, 0x3f], // 0.5
    ];
    expect(json.length % 8).not.toBe(0); // the fixture exercises the padding
    expect(Array.from(bytes)).toEqual(expected);
    expect((8 + n) % 8).toBe(0);
    expect(
      safetensorsBytes(
        [
          { name: 'a', shape: [2] },
          { name: 'b', shape: [1, 1] },
        ],
        { k: 'v' },
        { digests: false },
      ),
    ).toBe(bytes.length);

    const d = decodeSafetensors(bytes, opts);
    expect(d.metadata).toEqual({ k: 'v' });
    expect([...d.tensors.keys()]).toEqual(['a', 'b']);
    expect(d.tensors.get('a')).toEqual({ shape: [2], data: new Float32Array([1, -2]) });
    expect(d.tensors.get('b')).toEqual({ shape: [1, 1], data: new Float32Array([0.5]) });
  });

  it('reads a file written by another writer: no __metadata__, header unpadded, keys out of data order', () => {
    const f32 = new Uint8Array(new Float32Array([3, 4, 5]).buffer);
    const bytes = rawFile(
      '{"y":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
      f32,
    );
    const d = decodeSafetensors(bytes, opts);
    expect(d.metadata).toEqual({});
    expect([...d.tensors.keys()]).toEqual(['x', 'y']); // data order
    expect(Array.from(d.tensors.get('x')!.data)).toEqual([3, 4]);
    expect(Array.from(d.tensors.get('y')!.data)).toEqual([5]);
  });

  it('throws on a size mismatch, a repeated name and the reserved name __metadata__', () => {
    const t = (name: string, shape: number[], n: number) => ({ name, shape, data: new Float32Array(n) });
    expect(() => encodeSafetensors([t('a', [2, 3], 5)], {})).toThrow(/'a' has 5 values.*\[2, 3\] needs 6/);
    expect(() => encodeSafetensors([t('a', [1], 1), t('a', [1], 1)], {})).toThrow(/'a' is written twice/);
    expect(() => encodeSafetensors([t('__metadata__', [1], 1)], {})).toThrow(/reserved/);
    expect(() => encodeSafetensors([t('a', [-1], 0)], {})).toThrow(/invalid shape/);
  });
});

describe('safetensors round trip', () => {
  it('is bit-exact for random tensors incl. 0-element and odd sizes, with fresh (non-aliased) arrays', () => {
    const shapes = [[3, 5], [0], [7], [1, 1, 1], [2, 0, 3], [13, 3], [1]];
    const tensors = randomTensors(shapes, 7);
    const metadata = { a: 'x', empty: '', unicode: 'naïve ✓', json: '{"k":[1,2]}' };
    const bytes = encodeSafetensors(tensors, metadata);
    expect(bytes.length).toBe(safetensorsBytes(tensors, metadata));
    const n = new DataView(bytes.buffer).getUint32(0, true);
    expect((8 + n) % 8).toBe(0);

    // Decode from an unaligned view into a larger buffer: the data must be copied out.
    const host = new Uint8Array(bytes.length + 5);
    host.set(bytes, 3);
    const view = host.subarray(3, 3 + bytes.length);
    const d = decodeSafetensors(view, opts);
    expect(d.metadata).toEqual(metadata);
    expect([...d.tensors.keys()]).toEqual(tensors.map((t) => t.name));
    for (const t of tensors) {
      const got = d.tensors.get(t.name)!;
      expect(got.shape).toEqual(t.shape);
      expect(got.data.buffer).not.toBe(host.buffer);
      expect(bits(got.data)).toEqual(bits(t.data));
    }
  });

  it('keeps tensor order for integer-like names, and an empty file has only metadata', () => {
    const tensors = randomTensors([[2], [3], [1]], 3).map((t, i) => ({ ...t, name: ['10', '2', 'b'][i] }));
    const d = decodeSafetensors(encodeSafetensors(tensors, {}), opts);
    expect([...d.tensors.keys()]).toEqual(['10', '2', 'b']);
    const empty = decodeSafetensors(encodeSafetensors([], { only: 'meta' }), opts);
    expect(empty.tensors.size).toBe(0);
    expect(empty.metadata).toEqual({ only: 'meta' });
  });
});

describe('decodeSafetensors rejects', () => {
  const good = encodeSafetensors(randomTensors([[4], [2, 3]], 1), { k: 'v' });

  it('a file over maxBytes, before parsing anything', () => {
    expectFormatError(() => decodeSafetensors(good, { file: FILE, maxBytes: good.length - 1 }), 'size', /limit/);
    expectFormatError(() => decodeSafetensors(new Uint8Array(20).fill(0xff), { file: FILE, maxBytes: 10 }), 'size');
  });

  it('a file shorter than 8 bytes, a header beyond the file or beyond the cap', () => {
    expectFormatError(() => decodeSafetensors(new Uint8Array(5), opts), 'header length', /shorter than/);
    expectFormatError(() => decodeSafetensors(good.subarray(0, 20), opts), 'header length', /beyond the end/);
    const huge = new Uint8Array(16);
    new DataView(huge.buffer).setUint32(0, MAX_HEADER_BYTES + 1, true);
    expectFormatError(() => decodeSafetensors(huge, opts), 'header length', /cap/);
    const high = new Uint8Array(16);
    new DataView(high.buffer).setUint32(4, 1, true); // 2^32: above the cap
    expectFormatError(() => decodeSafetensors(high, opts), 'header length', /cap/);
  });

  it('invalid JSON, invalid UTF-8 and a non-object header', () => {
    expectFormatError(() => decodeSafetensors(rawFile('{"a": '), opts), 'header', /JSON/);
    const badUtf8 = rawFile('{}  ');
    badUtf8[9] = 0xff;
    expectFormatError(() => decodeSafetensors(badUtf8, opts), 'header');
    expectFormatError(() => decodeSafetensors(rawFile('[1, 2]'), opts), 'header', /not a JSON object/);
    expectFormatError(() => decodeSafetensors(rawFile('null'), opts), 'header');
  });

  it('metadata that is not a string→string map', () => {
    expectFormatError(() => decodeSafetensors(rawFile('{"__metadata__":{"a":1}}'), opts), '__metadata__', /'a'/);
    expectFormatError(() => decodeSafetensors(rawFile('{"__metadata__":["a"]}'), opts), '__metadata__');
    expectFormatError(() => decodeSafetensors(rawFile('{"__metadata__":"a"}'), opts), '__metadata__');
  });

  it('a dtype other than F32, naming the tensor and the dtype', () => {
    expectFormatError(() => decodeSafetensors(oneTensor({ dtype: 'F16', shape: [2], data_offsets: [0, 4] }, 4), opts), 't', /F16/);
    expectFormatError(() => decodeSafetensors(oneTensor({ shape: [1], data_offsets: [0, 4] }, 4), opts), 't', /dtype/);
    expectFormatError(() => decodeSafetensors(oneTensor(3, 0), opts), 't', /not an object/);
  });

  it('a shape that is not a list of non-negative integers', () => {
    for (const shape of [[-1], [1.5], ['2'], 3, null])
      expectFormatError(() => decodeSafetensors(oneTensor({ dtype: 'F32', shape, data_offsets: [0, 4] }, 4), opts), 't', /shape/);
  });

  it('offsets: not integers, end < begin, beyond the data, wrong byte length', () => {
    const e =
      (data_offsets: unknown, dataBytes = 8, shape = [1]) =>
      () =>
        decodeSafetensors(oneTensor({ dtype: 'F32', shape, data_offsets }, dataBytes), opts);
    expectFormatError(e([0.5, 4]), 't', /data_offsets/);
    expectFormatError(e([0]), 't', /data_offsets/);
    expectFormatError(e([-4, 0]), 't', /data_offsets/);
    expectFormatError(e('0,4'), 't', /data_offsets/);
    expectFormatError(e([4, 0]), 't', /end before/);
    expectFormatError(e([4, 12]), 't', /beyond/);
    expectFormatError(e([0, 8]), 't', /holds 8 bytes.*needs 4/);
  });

  it('overlapping tensors, gaps and trailing bytes: the data section must be covered exactly', () => {
    const entry = (begin: number, end: number) => ({ dtype: 'F32', shape: [(end - begin) / 4], data_offsets: [begin, end] });
    const two = (a: [number, number], b: [number, number], dataBytes: number) =>
      rawFile(JSON.stringify({ a: entry(...a), b: entry(...b) }), new Uint8Array(dataBytes));
    expectFormatError(() => decodeSafetensors(two([0, 8], [4, 12], 12), opts), 'b', /overlap/);
    expectFormatError(() => decodeSafetensors(two([0, 4], [8, 12], 12), opts), 'b', /gap/);
    expectFormatError(() => decodeSafetensors(two([4, 8], [8, 12], 12), opts), 'a', /gap/); // data not starting at 0
    expectFormatError(() => decodeSafetensors(two([0, 4], [4, 8], 12), opts), 'data', /4 trailing bytes/);
    expectFormatError(() => decodeSafetensors(rawFile('{}', new Uint8Array(4)), opts), 'data', /trailing/);
  });
});

describe('digests, F64 and non-finite values', () => {
  const strict = { file: FILE, maxBytes: 1 << 30 };
  const f32 = (name: string, values: number[]) => ({ name, shape: [values.length], data: new Float32Array(values) });

  it('a written file carries the digests (not shown in the metadata); one without them reads as digested: false', () => {
    const tensors = [f32('a', [1, 2, 3]), { name: 'h', shape: [2], data: new Float64Array([0.1, NaN]), nonFinite: 'allowed' as const }];
    const d = decodeSafetensors(encodeSafetensors(tensors, { k: 'v' }), { ...strict, allowF64: true, nonFiniteAllowed: (n) => n === 'h' });
    expect(d.digested).toBe(true);
    expect(d.metadata).toEqual({ k: 'v' });
    expect(Array.from(d.f64.get('h')!.data)).toEqual([0.1, NaN]);
    const plain = decodeSafetensors(encodeSafetensors([f32('a', [1])], { k: 'v' }, { digests: false }), strict);
    expect(plain.digested).toBe(false);
    expect(() => encodeSafetensors([], { xxh32: 'x' })).toThrow(/'xxh32' is reserved/);
    expect(safetensorsBytes(tensors, { k: 'v' })).toBe(encodeSafetensors(tensors, { k: 'v' }).length);
  });

  it('F64 is read only when asked for', () => {
    const bytes = encodeSafetensors([{ name: 'h', shape: [1], data: new Float64Array([2]) }], {});
    expectFormatError(() => decodeSafetensors(bytes, strict), 'h', /F64.*only F32/);
  });

  it('NaN/±Infinity: never written, refused on read naming the tensor and the first bad index, unless allowed', () => {
    expect(() => encodeSafetensors([f32('w', [0, 1, Infinity, NaN])], {}, { file: 'out.safetensors' })).toThrow(
      /^out\.safetensors: w: holds Infinity at index 2 \(\[2\]\); a non-finite value is never written$/,
    );
    const bytes = encodeSafetensors([{ ...f32('w', [0, 1, 2, NaN, 4, 5]), shape: [2, 3], nonFinite: 'allowed' }], {});
    let caught: unknown;
    try {
      decodeSafetensors(bytes, strict);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NonFiniteTensorError);
    expect(caught).toBeInstanceOf(CheckpointFormatError);
    expect([(caught as NonFiniteTensorError).field, (caught as NonFiniteTensorError).index]).toEqual(['w', 3]);
    expect((caught as Error).message).toBe(`${FILE}: w: holds NaN at index 3 ([1, 0]); a file holding NaN or ±Infinity is refused`);
    expect(decodeSafetensors(bytes, { ...strict, nonFiniteAllowed: () => true }).tensors.get('w')!.shape).toEqual([2, 3]);
  });

  it('a digest that does not match, a tensor or key without one, and digests that are not JSON', () => {
    const good = encodeSafetensors([f32('a', [1, 2]), f32('b', [3])], { k: 'v' });
    const flipped = good.slice();
    flipped[flipped.length - 1] ^= 0x40; // b's data
    expectFormatError(() => decodeSafetensors(flipped, strict), 'b', /XXH32 is [0-9a-f]{8}, the header's digest [0-9a-f]{8}/);
    const n = new DataView(good.buffer).getUint32(0, true);
    const header = new TextDecoder().decode(good.subarray(8, 8 + n)).trimEnd();
    const withHeader = (h: string) => rawFile(h, good.subarray(8 + n));
    expectFormatError(() => decodeSafetensors(withHeader(header.replace('"k":"v"', '"k":"w"')), strict), '__metadata__.k', /XXH32/);
    expectFormatError(
      () => decodeSafetensors(withHeader(header.replace('"k":"v"', '"k":"v","j":"v"')), strict),
      '__metadata__.j',
      /no digest/,
    );
    expectFormatError(
      () => decodeSafetensors(withHeader(header.replace(/"xxh32":"(?:[^"\\]|\\.)*"/, '"xxh32":"{"')), strict),
      '__metadata__.xxh32',
      /JSON/,
    );
  });
});
