// "Is this a checkpoint at all?" — asked of a file given to "Continue from checkpoint…" before the
// decoder sees it, so a random file is refused as not a checkpoint (not with a safetensors detail),
// and before the held run is touched. A checkpoint is a safetensors file (an 8-byte little-endian
// header length N, then N bytes of a JSON object) whose __metadata__.format is CHECKPOINT_FORMAT.
import { CHECKPOINT_FORMAT } from '../../train/checkpoint/checkpoint';

/** A safetensors header longer than this is not one the playground writes (its headers are KiBs to a few MiB). */
export const MAX_SNIFFED_HEADER_BYTES = 100 * 1024 * 1024;

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Why `bytes` (the file `file`) is not a checkpoint, as "<file>: not a checkpoint (…)"; null when it looks like one. */
export function notACheckpoint(bytes: Uint8Array, file: string): string | null {
  const refuse = (why: string) => `${file}: not a checkpoint (${why}).`;
  if (bytes.length < 8) return refuse(`${bytes.length} bytes, too short for a safetensors file`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(4, true) * 2 ** 32 + view.getUint32(0, true);
  if (n < 2 || n > bytes.length - 8 || n > MAX_SNIFFED_HEADER_BYTES || bytes[8] !== 0x7b /* { */)
    return refuse('not a safetensors file: it does not start with a safetensors JSON header');
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch {
    return refuse('not a safetensors file: its header is not JSON');
  }
  if (!isObject(header)) return refuse('not a safetensors file: its header is not a JSON object');
  const meta = header.__metadata__;
  const format = isObject(meta) ? meta.format : undefined;
  if (format === undefined)
    return refuse(`a safetensors file without __metadata__.format '${CHECKPOINT_FORMAT}': weights only, not a training checkpoint`);
  if (format !== CHECKPOINT_FORMAT) return refuse(`__metadata__.format is ${JSON.stringify(format)}, not '${CHECKPOINT_FORMAT}'`);
  return null;
}
