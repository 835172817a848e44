// The safetensors file layout (Hugging Face): an 8-byte little-endian u64 header length N, N bytes
// of UTF-8 JSON header (padded with spaces so the data starts at a multiple of 8), then the raw
// little-endian tensor data, packed contiguously in the order written. F32 tensors (and F64 where
// a reader asks for them: a checkpoint's metric history). Every file written carries an XXH32
// digest of each tensor's data and of each metadata value (metadata key `xxh32`), checked on read
// when present; a tensor holding NaN or ±Inf is neither written nor read unless its name is one the
// caller allows (history columns). Browser-safe: Uint8Array, DataView and TextEncoder/TextDecoder
// only (it runs in the worker too).

/** The reference implementation refuses headers larger than this; so do we, on both sides. */
export const MAX_HEADER_BYTES = 100_000_000;

const METADATA_KEY = '__metadata__';
/**
 * The metadata key holding the digests: JSON `{"metadata":{key: hex},"tensors":{name: hex}}`, each
 * the XXH32 (seed 0, 8 lower-case hex digits) of a metadata value's UTF-8 bytes or of a tensor's
 * little-endian data bytes. Decoded metadata never shows it.
 */
export const DIGEST_KEY = 'xxh32';

/** A file that is not a valid checkpoint: `file` is what was read, `field` the offending part. */
export class CheckpointFormatError extends Error {
  override readonly name: string = 'CheckpointFormatError';
  readonly file: string;
  /** The header field, metadata key or tensor name at fault (e.g. 'header length', 'param.wte', 'config.model.dim'). */
  readonly field: string;

  constructor(file: string, field: string, detail: string) {
    super(`${file}: ${field}: ${detail}`);
    this.file = file;
    this.field = field;
  }
}

/** A tensor holds NaN or ±Infinity where none may be (written or read): names the tensor, the first bad index and value. */
export class NonFiniteTensorError extends CheckpointFormatError {
  override readonly name: string = 'NonFiniteTensorError';

  constructor(
    file: string,
    tensor: string,
    readonly index: number,
    readonly value: number,
    shape: readonly number[],
    writing: boolean,
  ) {
    super(
      file,
      tensor,
      `holds ${value} at index ${index} (${coordinates(index, shape)}); ${writing ? 'a non-finite value is never written' : 'a file holding NaN or ±Infinity is refused'}`,
    );
  }
}

/** `[i, j, …]` of a flat row-major index in this shape. */
function coordinates(index: number, shape: readonly number[]): string {
  const out: number[] = [];
  let rest = index;
  for (let k = shape.length - 1; k >= 0; k--) {
    out.unshift(shape[k] > 0 ? rest % shape[k] : 0);
    rest = shape[k] > 0 ? Math.floor(rest / shape[k]) : 0;
  }
  return `[${out.join(', ')}]`;
}

export interface NamedTensor {
  name: string;
  shape: readonly number[];
  /** Float32Array: dtype F32; Float64Array: dtype F64. */
  data: Float32Array | Float64Array;
  /** 'allowed': the tensor may hold NaN/±Infinity (a metric history column); otherwise writing one is refused. */
  nonFinite?: 'allowed';
}

export interface DecodedSafetensors {
  /** The file's metadata, without the digests. */
  metadata: Record<string, string>;
  /** F32 tensors, in data order (the order written). */
  tensors: Map<string, { shape: number[]; data: Float32Array }>;
  /** F64 tensors (only with `allowF64`), in data order. */
  f64: Map<string, { shape: number[]; data: Float64Array }>;
  /** Whether the file carried digests (all of them checked); files of other writers and older checkpoints do not. */
  digested: boolean;
}

export interface DecodeOptions {
  file: string;
  maxBytes: number;
  /** Read F64 tensors too (into `f64`); otherwise an F64 tensor is refused like any other dtype. */
  allowF64?: boolean;
  /** Tensors that may hold NaN/±Infinity (history columns); every other tensor must be finite. */
  nonFiniteAllowed?: (name: string) => boolean;
}

const PRIME1 = 0x9e3779b1;
const PRIME2 = 0x85ebca77;
const PRIME3 = 0xc2b2ae3d;
const PRIME4 = 0x27d4eb2f;
const PRIME5 = 0x165667b1;
const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));

/**
 * XXH32 (seed 0) of these bytes, as 8 lower-case hex digits: the reference algorithm
 * (github.com/Cyan4973/xxHash, doc/xxhash_spec.md), in 32-bit integer arithmetic. Every step is a
 * bijection of the state for a fixed input, so any single flipped bit changes the digest.
 */
export function xxh32(bytes: Uint8Array): string {
  const n = bytes.length;
  const aligned = LITTLE_ENDIAN && bytes.byteOffset % 4 === 0;
  const words = aligned ? new Uint32Array(bytes.buffer, bytes.byteOffset, n >>> 2) : null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, n);
  const word = (i: number): number => (words ? words[i >>> 2] : view.getUint32(i, true));
  let p = 0;
  let h: number;
  if (n >= 16) {
    let v1 = (PRIME1 + PRIME2) | 0;
    let v2 = PRIME2 | 0;
    let v3 = 0;
    let v4 = -PRIME1 | 0;
    const limit = n - 16;
    if (words) {
      for (let w = 0; p <= limit; p += 16, w += 4) {
        v1 = Math.imul(rotl((v1 + Math.imul(words[w], PRIME2)) | 0, 13), PRIME1);
        v2 = Math.imul(rotl((v2 + Math.imul(words[w + 1], PRIME2)) | 0, 13), PRIME1);
        v3 = Math.imul(rotl((v3 + Math.imul(words[w + 2], PRIME2)) | 0, 13), PRIME1);
        v4 = Math.imul(rotl((v4 + Math.imul(words[w + 3], PRIME2)) | 0, 13), PRIME1);
      }
    } else {
      for (; p <= limit; p += 16) {
        v1 = Math.imul(rotl((v1 + Math.imul(word(p), PRIME2)) | 0, 13), PRIME1);
        v2 = Math.imul(rotl((v2 + Math.imul(word(p + 4), PRIME2)) | 0, 13), PRIME1);
        v3 = Math.imul(rotl((v3 + Math.imul(word(p + 8), PRIME2)) | 0, 13), PRIME1);
        v4 = Math.imul(rotl((v4 + Math.imul(word(p + 12), PRIME2)) | 0, 13), PRIME1);
      }
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = PRIME5 | 0;
  }
  h = (h + n) | 0;
  for (; p + 4 <= n; p += 4) h = Math.imul(rotl((h + Math.imul(word(p), PRIME3)) | 0, 17), PRIME4);
  for (; p < n; p++) h = Math.imul(rotl((h + Math.imul(bytes[p], PRIME5)) | 0, 11), PRIME1);
  h ^= h >>> 15;
  h = Math.imul(h, PRIME2);
  h ^= h >>> 13;
  h = Math.imul(h, PRIME3);
  h ^= h >>> 16;
  return (h >>> 0).toString(16).padStart(8, '0');
}

const bytesOf = (a: Float32Array | Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** The first index holding NaN or ±Infinity, or -1. */
export function firstNonFinite(a: Float32Array | Float64Array): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    if (x - x !== 0) return i;
  }
  return -1;
}

/** The digests of these tensors and metadata values (placeholders when `zeros`, for size queries: same length). */
function digestsOf(tensors: ReadonlyArray<{ name: string; data?: Float32Array | Float64Array }>, metadata: Record<string, string>): string {
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) meta[k] = xxh32(new TextEncoder().encode(v));
  const parts = tensors.map((t) => `${JSON.stringify(t.name)}:"${t.data ? xxh32(bytesOf(t.data)) : '00000000'}"`);
  return `{"metadata":${JSON.stringify(meta)},"tensors":{${parts.join(',')}}}`;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const product = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * The padded header bytes and the data-section size for these tensor shapes and metadata. Shared by
 * the encoder and by size queries, so a predicted size is the written size by construction.
 */
export function safetensorsHeader(
  tensors: ReadonlyArray<{ name: string; shape: readonly number[]; data?: Float32Array | Float64Array }>,
  metadata: Record<string, string>,
  o: { digests?: boolean } = {},
): { header: Uint8Array; dataBytes: number } {
  if (DIGEST_KEY in metadata) throw new Error(`safetensors: metadata key '${DIGEST_KEY}' is reserved (the digests)`);
  if (o.digests !== false) metadata = { ...metadata, [DIGEST_KEY]: digestsOf(tensors, metadata) };
  const seen = new Set<string>();
  // Built by hand, not JSON.stringify of one object: JS objects move integer-like keys first.
  const parts = [`${JSON.stringify(METADATA_KEY)}:${JSON.stringify(metadata)}`];
  let offset = 0;
  for (const t of tensors) {
    if (t.name === METADATA_KEY) throw new Error(`safetensors: tensor name '${METADATA_KEY}' is reserved`);
    if (seen.has(t.name)) throw new Error(`safetensors: tensor '${t.name}' is written twice`);
    seen.add(t.name);
    if (!t.shape.every((d) => isCount(d))) throw new Error(`safetensors: tensor '${t.name}' has an invalid shape [${t.shape.join(', ')}]`);
    const width = t.data instanceof Float64Array ? 8 : 4;
    const end = offset + width * product(t.shape);
    parts.push(
      `${JSON.stringify(t.name)}:${JSON.stringify({ dtype: width === 8 ? 'F64' : 'F32', shape: t.shape, data_offsets: [offset, end] })}`,
    );
    offset = end;
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded > MAX_HEADER_BYTES) throw new Error(`safetensors: header of ${padded} bytes exceeds the ${MAX_HEADER_BYTES}-byte cap`);
  const header = new Uint8Array(padded).fill(0x20);
  header.set(json);
  return { header, dataBytes: offset };
}

/**
 * Total file size for these tensor shapes and metadata (F32 tensors, or F64 where a `data` of that
 * type is given; digests included unless `digests: false`, as the encoder writes them).
 */
export function safetensorsBytes(
  tensors: ReadonlyArray<{ name: string; shape: readonly number[]; data?: Float32Array | Float64Array }>,
  metadata: Record<string, string>,
  o: { digests?: boolean } = {},
): number {
  const { header, dataBytes } = safetensorsHeader(
    tensors.map((t) => ({ name: t.name, shape: t.shape, data: t.data instanceof Float64Array ? EMPTY_F64 : undefined })),
    metadata,
    o,
  );
  return 8 + header.length + dataBytes;
}

const EMPTY_F64 = new Float64Array(0);

/**
 * Encodes F32/F64 tensors (in the given order) and string metadata, with the digests of both
 * (unless `digests: false`: a plain file, as other writers make). Throws on a size/shape mismatch,
 * a repeated/reserved name, and (NonFiniteTensorError naming `o.file`, the tensor and the first bad
 * index) on NaN/±Infinity in a tensor not marked `nonFinite: 'allowed'`.
 */
export function encodeSafetensors(
  tensors: readonly NamedTensor[],
  metadata: Record<string, string>,
  o: { file?: string; digests?: boolean } = {},
): Uint8Array {
  for (const t of tensors) {
    if (t.shape.every((d) => isCount(d)) && t.data.length !== product(t.shape))
      throw new Error(
        `safetensors: tensor '${t.name}' has ${t.data.length} values, shape [${t.shape.join(', ')}] needs ${product(t.shape)}`,
      );
    if (t.nonFinite !== 'allowed') {
      const i = firstNonFinite(t.data);
      if (i >= 0) throw new NonFiniteTensorError(o.file ?? 'safetensors (being written)', t.name, i, t.data[i], t.shape, true);
    }
  }
  const { header, dataBytes } = safetensorsHeader(tensors, metadata, o);
  const out = new Uint8Array(8 + header.length + dataBytes);
  const view = new DataView(out.buffer);
  // u64 little-endian as two u32 halves (a header is < 2^32 bytes).
  view.setUint32(0, header.length, true);
  view.setUint32(4, 0, true);
  out.set(header, 8);
  let pos = 8 + header.length;
  for (const t of tensors) {
    if (LITTLE_ENDIAN) out.set(bytesOf(t.data), pos);
    else if (t.data instanceof Float64Array) for (let i = 0; i < t.data.length; i++) view.setFloat64(pos + 8 * i, t.data[i], true);
    else for (let i = 0; i < t.data.length; i++) view.setFloat32(pos + 4 * i, t.data[i], true);
    pos += t.data.byteLength;
  }
  return out;
}

interface RawEntry {
  name: string;
  dtype: 'F32' | 'F64';
  shape: number[];
  begin: number;
  end: number;
}

/**
 * Decodes and validates a safetensors file of F32 tensors (and F64 with `allowF64`); checks the
 * digests when the file has them, and refuses NaN/±Infinity in every tensor `nonFiniteAllowed` does
 * not allow. Throws CheckpointFormatError (NonFiniteTensorError) naming `o.file` and the field or tensor.
 */
export function decodeSafetensors(bytes: Uint8Array, o: DecodeOptions): DecodedSafetensors {
  const fail = (field: string, detail: string): never => {
    throw new CheckpointFormatError(o.file, field, detail);
  };
  if (bytes.length > o.maxBytes) fail('size', `file is ${bytes.length} bytes, more than the ${o.maxBytes}-byte limit`);
  if (bytes.length < 8) fail('header length', `file is ${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lo = view.getUint32(0, true);
  const hi = view.getUint32(4, true);
  const n = hi * 2 ** 32 + lo;
  if (n > MAX_HEADER_BYTES) fail('header length', `header of ${n} bytes exceeds the ${MAX_HEADER_BYTES}-byte cap`);
  if (n > bytes.length - 8) fail('header length', `header of ${n} bytes goes beyond the end of the ${bytes.length}-byte file (truncated?)`);
  const header = parseHeader(bytes.subarray(8, 8 + n), fail);
  const dataStart = 8 + n;
  const dataBytes = bytes.length - dataStart;

  const metadata = parseMetadata(header[METADATA_KEY], fail);
  const entries: RawEntry[] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name !== METADATA_KEY) entries.push(parseEntry(name, value, dataBytes, o.allowF64 === true, fail));
  }
  const digests = DIGEST_KEY in metadata ? parseDigests(metadata, entries, fail) : null;
  checkCoverage(entries, dataBytes, fail);

  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  const f64 = new Map<string, { shape: number[]; data: Float64Array }>();
  for (const e of entries) {
    // Fresh, aligned storage: the source offset need not be a multiple of 4 (or 8).
    const width = e.dtype === 'F64' ? 8 : 4;
    const data = width === 8 ? new Float64Array((e.end - e.begin) / 8) : new Float32Array((e.end - e.begin) / 4);
    const src = bytes.subarray(dataStart + e.begin, dataStart + e.end);
    if (LITTLE_ENDIAN) new Uint8Array(data.buffer).set(src);
    else
      for (let i = 0; i < data.length; i++)
        data[i] = width === 8 ? view.getFloat64(dataStart + e.begin + 8 * i, true) : view.getFloat32(dataStart + e.begin + 4 * i, true);
    if (digests) {
      const got = xxh32(bytesOf(data));
      const want = digests.tensors[e.name];
      if (got !== want)
        fail(
          e.name,
          `its data's XXH32 is ${got}, the header's digest ${want}: the data changed after it was written (a flipped bit, a bad disk or copy)`,
        );
    }
    if (!o.nonFiniteAllowed?.(e.name)) {
      const i = firstNonFinite(data);
      if (i >= 0) throw new NonFiniteTensorError(o.file, e.name, i, data[i], e.shape, false);
    }
    if (data instanceof Float64Array) f64.set(e.name, { shape: e.shape, data });
    else tensors.set(e.name, { shape: e.shape, data });
  }
  delete metadata[DIGEST_KEY];
  return { metadata, tensors, f64, digested: digests !== null };
}

const HEX8 = /^[0-9a-f]{8}$/;

/**
 * The digests in the metadata, checked against the metadata values here (tensors are checked as
 * they are read): every metadata key and every tensor has one, and nothing else does.
 */
function parseDigests(metadata: Record<string, string>, entries: readonly RawEntry[], fail: Fail): { tensors: Record<string, string> } {
  const field = `${METADATA_KEY}.${DIGEST_KEY}`;
  let raw: unknown;
  try {
    raw = JSON.parse(metadata[DIGEST_KEY]);
  } catch (e) {
    return fail(field, `is not valid JSON (${(e as Error).message})`);
  }
  if (!isPlainObject(raw) || !isPlainObject(raw.metadata) || !isPlainObject(raw.tensors))
    return fail(field, 'is not an object {"metadata": {…}, "tensors": {…}}');
  const check = (group: Record<string, unknown>, names: string[], what: string, prefix: string) => {
    for (const [k, v] of Object.entries(group))
      if (typeof v !== 'string' || !HEX8.test(v)) fail(field, `${what} '${k}': ${JSON.stringify(v)} is not 8 hex digits`);
    const have = new Set(names);
    for (const k of Object.keys(group)) if (!have.has(k)) fail(`${prefix}${k}`, `${what} missing (the digests list it)`);
    for (const k of names) if (!Object.hasOwn(group, k)) fail(`${prefix}${k}`, `${what} has no digest (added after the file was written?)`);
  };
  const keys = Object.keys(metadata).filter((k) => k !== DIGEST_KEY);
  check(raw.metadata, keys, 'metadata key', `${METADATA_KEY}.`);
  check(
    raw.tensors,
    entries.map((e) => e.name),
    'tensor',
    '',
  );
  for (const k of keys) {
    const got = xxh32(new TextEncoder().encode(metadata[k]));
    const want = raw.metadata[k] as string;
    if (got !== want)
      fail(`${METADATA_KEY}.${k}`, `its XXH32 is ${got}, the header's digest ${want}: the value changed after it was written`);
  }
  return { tensors: raw.tensors as Record<string, string> };
}

type Fail = (field: string, detail: string) => never;

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function parseHeader(raw: Uint8Array, fail: Fail): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
  } catch (e) {
    return fail('header', `is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  if (!isPlainObject(parsed)) return fail('header', 'is not a JSON object');
  return parsed;
}

function parseMetadata(raw: unknown, fail: Fail): Record<string, string> {
  if (raw === undefined) return {};
  if (!isPlainObject(raw)) return fail(METADATA_KEY, 'must be an object of strings');
  for (const [k, v] of Object.entries(raw)) if (typeof v !== 'string') fail(METADATA_KEY, `key '${k}' holds a ${typeof v}, not a string`);
  // fromEntries defines own properties, so a '__proto__' key stays plain data.
  return Object.fromEntries(Object.entries(raw as Record<string, string>));
}

function parseEntry(name: string, raw: unknown, dataBytes: number, allowF64: boolean, fail: Fail): RawEntry {
  if (!isPlainObject(raw)) return fail(name, 'tensor entry is not an object');
  const dtype = raw.dtype;
  if (!(dtype === 'F32' || (allowF64 && dtype === 'F64')))
    fail(name, `dtype ${JSON.stringify(dtype)} is not supported (only F32${allowF64 ? ' and F64' : ''})`);
  const shape = raw.shape;
  if (!Array.isArray(shape) || !shape.every(isCount))
    return fail(name, `shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  const off = raw.data_offsets;
  if (!Array.isArray(off) || off.length !== 2 || !off.every(isCount))
    return fail(name, `data_offsets ${JSON.stringify(off)} is not a pair of non-negative integers`);
  const [begin, end] = off as [number, number];
  if (end < begin) fail(name, `data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataBytes) fail(name, `data_offsets [${begin}, ${end}] go beyond the ${dataBytes}-byte data section (truncated?)`);
  const want = (dtype === 'F64' ? 8 : 4) * product(shape);
  if (end - begin !== want) fail(name, `holds ${end - begin} bytes, shape [${shape.join(', ')}] needs ${want}`);
  return { name, dtype: dtype as 'F32' | 'F64', shape: shape as number[], begin, end };
}

/** The tensors must tile the data section exactly: no overlap, no gap, no trailing bytes. Sorts `entries` by offset. */
function checkCoverage(entries: RawEntry[], dataBytes: number, fail: Fail): void {
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let pos = 0;
  for (const e of entries) {
    if (e.begin < pos) fail(e.name, `data_offsets [${e.begin}, ${e.end}] overlap the previous tensor (ends at ${pos})`);
    if (e.begin > pos) fail(e.name, `data_offsets [${e.begin}, ${e.end}] leave a gap after byte ${pos}`);
    pos = e.end;
  }
  if (pos !== dataBytes) fail('data', `${dataBytes - pos} trailing bytes after the last tensor (ends at ${pos} of ${dataBytes})`);
}
