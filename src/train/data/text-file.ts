// A training text from a file's bytes (the CLI's --data file:<path>): UTF-8 text only. Binary files
// (a NUL byte) and invalid UTF-8 are refused with the path and the byte offset, never decoded into
// replacement characters and trained on silently; files over MAX_TEXT_FILE_BYTES are refused
// before they are read. Every error is a DataFileError naming the path.

/**
 * The largest text file read: 256 MiB. The text becomes one JavaScript string (V8 caps a string
 * at 2^29 − 24 UTF-16 units, about 512 MiB of ASCII: past it the read fails with "Cannot create a
 * string longer than 0x1fffffe8 characters") and the validation hold-out splits and joins it once
 * more, so half the string limit leaves room for that copy.
 */
export const MAX_TEXT_FILE_BYTES = 256 * 2 ** 20;

/** A data file that cannot be used: `path` is the file, the message names it and says why. */
export class DataFileError extends Error {
  override readonly name: string = 'DataFileError';
  readonly path: string;

  constructor(path: string, why: string, options?: ErrorOptions) {
    super(`data file ${path}: ${why}`, options);
    this.path = path;
  }
}

/** Byte offset of the first invalid UTF-8 sequence (overlong, surrogate, past U+10FFFF, truncated), or −1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) [need, min] = [1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [need, min] = [2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [need, min] = [3, 0x10000];
    else return i;
    if (i + need >= n) return i; // truncated at the end
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** The text of a file's bytes (a leading BOM dropped); throws a DataFileError naming `path` for binary or invalid UTF-8. */
export function decodeTextFile(bytes: Uint8Array, path: string): string {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new DataFileError(path, `looks binary (a NUL byte at offset ${nul}); training needs a UTF-8 text file`);
  const bad = firstInvalidUtf8(bytes);
  if (bad >= 0)
    throw new DataFileError(
      path,
      `is not valid UTF-8 (byte 0x${bytes[bad].toString(16).padStart(2, '0')} at offset ${bad}); convert it to UTF-8 text (e.g. iconv -t UTF-8)`,
    );
  return new TextDecoder('utf-8').decode(bytes);
}

/** Throws a DataFileError when a file of `bytes` bytes is over the limit (checked before reading it). */
export function checkTextFileSize(path: string, bytes: number, limit = MAX_TEXT_FILE_BYTES): void {
  const size = (b: number) => (b >= 2 ** 20 ? `${Number((b / 2 ** 20).toFixed(1))} MiB` : `${b} bytes`);
  if (bytes > limit)
    throw new DataFileError(path, `is ${size(bytes)}; text files up to ${size(limit)} are read (cut it, e.g. head -c ${limit})`);
}
