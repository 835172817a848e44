// --data file:<path> (src/cli/data-node.ts readTextFile, src/train/data/text-file.ts): UTF-8 text
// only, a stated size limit checked with fs.stat before reading, and every error a DataFileError
// naming the path — binary, invalid UTF-8, a directory, a missing file, an oversize (sparse) file.
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { readTextFile } from '../../src/cli/data-node';
import { isUserError } from '../../src/cli/main';
import { DataFileError, decodeTextFile, firstInvalidUtf8, MAX_TEXT_FILE_BYTES } from '../../src/train/data/text-file';
import { mulberry32 } from '../../src/util/random';

const dir = mkdtempSync(join(tmpdir(), 'nsa-data-file-'));
const file = (name: string, bytes: Uint8Array | string) => {
  const p = join(dir, name);
  writeFileSync(p, bytes);
  return p;
};

function refusal(f: () => unknown): DataFileError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DataFileError);
    expect(isUserError(e)).toBe(true); // exit 2, message only
    return e as DataFileError;
  }
  throw new Error('expected a DataFileError');
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('data files', () => {
  it('reads UTF-8 text (multi-byte characters, a BOM dropped)', () => {
    expect(readTextFile(file('ok.txt', 'héllo wörld — 日本 🙂\n'))).toBe('héllo wörld — 日本 🙂\n');
    expect(readTextFile(file('bom.txt', new Uint8Array([0xef, 0xbb, 0xbf, 0x61])))).toBe('a');
  });

  it('refuses a binary file (NUL byte) naming the path and the offset', () => {
    const p = file('image.bin', new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x00, 0x01]));
    const e = refusal(() => readTextFile(p));
    expect(e.path).toBe(p);
    expect(e.message).toBe(`data file ${p}: looks binary (a NUL byte at offset 4); training needs a UTF-8 text file`);
  });

  it('refuses invalid UTF-8 naming the path, the byte and its offset (Latin-1, overlong, surrogate, truncated)', () => {
    const cases: Array<[number[], number]> = [
      [[0x63, 0x61, 0x66, 0xe9], 3], // Latin-1 'café'
      [[0x61, 0xc0, 0xaf], 1], // overlong '/'
      [[0xed, 0xa0, 0x80], 0], // a UTF-16 surrogate
      [[0x61, 0x62, 0xe2, 0x82], 2], // truncated '€'
      [[0x80], 0], // lone continuation byte
      [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
    ];
    for (const [bytes, offset] of cases) {
      const p = file(`bad-${offset}-${bytes.length}.txt`, new Uint8Array(bytes));
      const e = refusal(() => readTextFile(p));
      expect(e.message).toMatch(new RegExp(`^data file ${p}: is not valid UTF-8 \\(byte 0x[0-9a-f]{2} at offset ${offset}\\)`));
    }
  });

  it('firstInvalidUtf8 agrees with a fatal TextDecoder on 3000 random byte strings', () => {
    const r = mulberry32(10);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let invalid = 0;
    for (let i = 0; i < 3000; i++) {
      // Mostly valid-looking: ASCII with some lead and continuation bytes.
      const bytes = Uint8Array.from({ length: 1 + Math.floor(r() * 12) }, () =>
        r() < 0.6 ? 0x20 + Math.floor(r() * 90) : 0x80 + Math.floor(r() * 128),
      );
      let ok = true;
      try {
        decoder.decode(bytes);
      } catch {
        ok = false;
      }
      if (!ok) invalid++;
      expect(firstInvalidUtf8(bytes) < 0, Array.from(bytes).join(',')).toBe(ok);
    }
    expect(invalid).toBeGreaterThan(300);
    expect(invalid).toBeLessThan(2900);
  });

  it('refuses a directory naming the path (was a bare EISDIR)', () => {
    expect(refusal(() => readTextFile(dir)).message).toBe(
      `data file ${dir}: is a directory; give a text file (--data file:<path to a .txt file>)`,
    );
  });

  it('refuses a missing file naming the path and the reason', () => {
    const p = join(dir, 'missing.txt');
    expect(refusal(() => readTextFile(p)).message).toBe(`data file ${p}: cannot be read (ENOENT)`);
  });

  it(`refuses a file over the stated limit (${MAX_TEXT_FILE_BYTES / 2 ** 20} MiB) from its size, before reading it`, () => {
    // A sparse file: 300 MiB by fs.stat, no disk blocks; reading it would take seconds and 300 MiB.
    const p = file('huge.txt', '');
    truncateSync(p, 300 * 2 ** 20);
    const t0 = performance.now();
    const e = refusal(() => readTextFile(p));
    expect(performance.now() - t0).toBeLessThan(100);
    expect(e.message).toBe(`data file ${p}: is 300 MiB; text files up to 256 MiB are read (cut it, e.g. head -c ${MAX_TEXT_FILE_BYTES})`);
    // The limit applies to bytes, not characters: one byte over a small stated limit is refused.
    const small = file('small.txt', 'x'.repeat(101));
    expect(refusal(() => readTextFile(small, 100)).message).toMatch(/is 101 bytes; text files up to 100 bytes are read/);
    expect(readTextFile(small, 101)).toHaveLength(101);
  });

  it('decodeTextFile is the check on bytes (what the page could share)', () => {
    expect(decodeTextFile(new TextEncoder().encode('abc'), 'x.txt')).toBe('abc');
    expect(() => decodeTextFile(new Uint8Array([0xff]), 'upload.txt')).toThrow(/^data file upload\.txt: is not valid UTF-8/);
  });
});
