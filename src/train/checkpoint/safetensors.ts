// The safetensors file layout (Hugging Face): an 8-byte little-endian u64 header length N, N bytes
// of UTF-8 JSON header (padded with spaces so the data starts at a multiple of 8), then the raw
// little-endian tensor data, packed contiguously in the order written. Only F32 tensors.
// Browser-safe: Uint8Array, DataView and TextEncoder/TextDecoder only (it runs in the worker too).

/** The reference implementation refuses headers larger than this; so do we, on both sides. */
export const MAX_HEADER_BYTES = 100_000_000;

const METADATA_KEY = '__metadata__';

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

export interface NamedTensor {
  name: string;
  shape: readonly number[];
  data: Float32Array;
}

export interface DecodedSafetensors {
  metadata: Record<string, string>;
  /** In data order (the order written). */
  tensors: Map<string, { shape: number[]; data: Float32Array }>;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const product = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;

/**
 * The padded header bytes and the data-section size for these tensor shapes and metadata. Shared by
 * the encoder and by size queries, so a predicted size is the written size by construction.
 */
export function safetensorsHeader(
  tensors: ReadonlyArray<{ name: string; shape: readonly number[] }>,
  metadata: Record<string, string>,
): { header: Uint8Array; dataBytes: number } {
  const seen = new Set<string>();
  // Built by hand, not JSON.stringify of one object: JS objects move integer-like keys first.
  const parts = [`${JSON.stringify(METADATA_KEY)}:${JSON.stringify(metadata)}`];
  let offset = 0;
  for (const t of tensors) {
    if (t.name === METADATA_KEY) throw new Error(`safetensors: tensor name '${METADATA_KEY}' is reserved`);
    if (seen.has(t.name)) throw new Error(`safetensors: tensor '${t.name}' is written twice`);
    seen.add(t.name);
    if (!t.shape.every((d) => isCount(d))) throw new Error(`safetensors: tensor '${t.name}' has an invalid shape [${t.shape.join(', ')}]`);
    const end = offset + 4 * product(t.shape);
    parts.push(`${JSON.stringify(t.name)}:${JSON.stringify({ dtype: 'F32', shape: t.shape, data_offsets: [offset, end] })}`);
    offset = end;
  }
  const json = new TextEncoder().encode(`{${parts.join(',')}}`);
  const padded = Math.ceil(json.length / 8) * 8;
  if (padded > MAX_HEADER_BYTES) throw new Error(`safetensors: header of ${padded} bytes exceeds the ${MAX_HEADER_BYTES}-byte cap`);
  const header = new Uint8Array(padded).fill(0x20);
  header.set(json);
  return { header, dataBytes: offset };
}

/** Total file size for these tensor shapes and metadata. */
export function safetensorsBytes(
  tensors: ReadonlyArray<{ name: string; shape: readonly number[] }>,
  metadata: Record<string, string>,
): number {
  const { header, dataBytes } = safetensorsHeader(tensors, metadata);
  return 8 + header.length + dataBytes;
}

/** Encodes F32 tensors (in the given order) and string metadata; throws on a size/shape mismatch or a repeated/reserved name. */
export function encodeSafetensors(tensors: readonly NamedTensor[], metadata: Record<string, string>): Uint8Array {
  for (const t of tensors)
    if (t.shape.every((d) => isCount(d)) && t.data.length !== product(t.shape))
      throw new Error(
        `safetensors: tensor '${t.name}' has ${t.data.length} values, shape [${t.shape.join(', ')}] needs ${product(t.shape)}`,
      );
  const { header, dataBytes } = safetensorsHeader(tensors, metadata);
  const out = new Uint8Array(8 + header.length + dataBytes);
  const view = new DataView(out.buffer);
  // u64 little-endian as two u32 halves (a header is < 2^32 bytes).
  view.setUint32(0, header.length, true);
  view.setUint32(4, 0, true);
  out.set(header, 8);
  let pos = 8 + header.length;
  for (const t of tensors) {
    if (LITTLE_ENDIAN) out.set(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength), pos);
    else for (let i = 0; i < t.data.length; i++) view.setFloat32(pos + 4 * i, t.data[i], true);
    pos += t.data.byteLength;
  }
  return out;
}

interface RawEntry {
  name: string;
  shape: number[];
  begin: number;
  end: number;
}

/** Decodes and validates a safetensors file of F32 tensors; throws CheckpointFormatError naming `o.file` and the field. */
export function decodeSafetensors(bytes: Uint8Array, o: { file: string; maxBytes: number }): DecodedSafetensors {
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
    if (name !== METADATA_KEY) entries.push(parseEntry(name, value, dataBytes, fail));
  }
  checkCoverage(entries, dataBytes, fail);

  const tensors = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const e of entries) {
    // Fresh, aligned storage: the source offset need not be a multiple of 4.
    const data = new Float32Array((e.end - e.begin) / 4);
    const src = bytes.subarray(dataStart + e.begin, dataStart + e.end);
    if (LITTLE_ENDIAN) new Uint8Array(data.buffer).set(src);
    else for (let i = 0; i < data.length; i++) data[i] = view.getFloat32(dataStart + e.begin + 4 * i, true);
    tensors.set(e.name, { shape: e.shape, data });
  }
  return { metadata, tensors };
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

function parseEntry(name: string, raw: unknown, dataBytes: number, fail: Fail): RawEntry {
  if (!isPlainObject(raw)) return fail(name, 'tensor entry is not an object');
  if (raw.dtype !== 'F32') fail(name, `dtype ${JSON.stringify(raw.dtype)} is not supported (only F32)`);
  const shape = raw.shape;
  if (!Array.isArray(shape) || !shape.every(isCount))
    return fail(name, `shape ${JSON.stringify(shape)} is not a list of non-negative integers`);
  const off = raw.data_offsets;
  if (!Array.isArray(off) || off.length !== 2 || !off.every(isCount))
    return fail(name, `data_offsets ${JSON.stringify(off)} is not a pair of non-negative integers`);
  const [begin, end] = off as [number, number];
  if (end < begin) fail(name, `data_offsets [${begin}, ${end}] end before they begin`);
  if (end > dataBytes) fail(name, `data_offsets [${begin}, ${end}] go beyond the ${dataBytes}-byte data section (truncated?)`);
  const want = 4 * product(shape);
  if (end - begin !== want) fail(name, `holds ${end - begin} bytes, shape [${shape.join(', ')}] needs ${want}`);
  return { name, shape: shape as number[], begin, end };
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
