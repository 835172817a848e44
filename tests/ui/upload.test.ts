// Uploaded training text: .txt only, not empty, ≤ 20 MiB, really text; every refusal explains.
import { describe, expect, it } from 'vitest';

import { controlFraction, MAX_UPLOAD_BYTES, validateUploadedText } from '../../src/ui/data/upload';

const file = (parts: BlobPart[], name = 'notes.txt') => new File(parts, name, { type: 'text/plain' });

describe('validateUploadedText', () => {
  it('File is a Node global here (Node ≥ 20)', () => {
    expect(typeof globalThis.File).toBe('function');
  });

  it('accepts UTF-8 text, drops a BOM, keeps everything else', async () => {
    const text = 'The quick brown fox.\r\n\tNaïve café — 日本語 🙂\n\nSecond document.\f\n';
    expect(await validateUploadedText(file([text]))).toEqual({ ok: true, text, name: 'notes.txt' });
    const bom = await validateUploadedText(file([new Uint8Array([0xef, 0xbb, 0xbf]), 'hi'], 'B.TXT'));
    expect(bom).toEqual({ ok: true, text: 'hi', name: 'B.TXT' });
  });

  it('accepts exactly the size limit', async () => {
    const r = await validateUploadedText(file([new Uint8Array(MAX_UPLOAD_BYTES).fill(0x61)]));
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.text.length).toBe(MAX_UPLOAD_BYTES);
  });

  it.each<[string, File, RegExp]>([
    ['a non-.txt name', file(['hello'], 'notes.md'), /^“notes\.md” is not a \.txt file\./],
    ['an empty file', file([]), /^“notes\.txt” is empty\./],
    ['a whitespace-only file', file([' \n\t\r\n ']), /^“notes\.txt” holds only whitespace\./],
    ['an over-size file', file([new Uint8Array(MAX_UPLOAD_BYTES + 1)]), /^“notes\.txt” is 20\.0 MiB; the limit is 20 MiB\./],
    ['NUL bytes', file(['text', new Uint8Array([0]), 'more']), /^“notes\.txt” contains NUL bytes \(first at byte 4\): it is a binary file/],
    ['invalid UTF-8', file([new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x21])]), /^“notes\.txt” is not valid UTF-8 text/],
    ['a truncated UTF-8 sequence', file([new Uint8Array([0x68, 0xe6, 0x97])]), /is not valid UTF-8 text/],
    ['Latin-1 text', file([new Uint8Array([0x63, 0x61, 0x66, 0xe9])]), /is not valid UTF-8 text/],
    [
      'many control characters',
      file(['a'.repeat(97) + '\x01\x02\x1b']),
      /^“notes\.txt” looks binary: 3\.0% of its characters are control characters/,
    ],
  ])('refuses %s with a clear message', async (_, f, message) => {
    const r = await validateUploadedText(f);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });

  it('refuses an over-size file without reading it', async () => {
    const f = file([new Uint8Array(MAX_UPLOAD_BYTES + 1)]);
    let read = false;
    Object.defineProperty(f, 'arrayBuffer', { value: () => ((read = true), Promise.reject(new Error('read'))) });
    expect((await validateUploadedText(f)).ok).toBe(false);
    expect(read).toBe(false);
  });

  it('counts control characters but not tab, newlines, CR, FF, VT', () => {
    expect(controlFraction('\t\n\r\f\v')).toBe(0);
    expect(controlFraction('ab\x00\x7f')).toBe(0.5);
    expect(controlFraction('\u0085x')).toBe(0.5); // C1 control
    expect(controlFraction('')).toBe(0);
    // 1% is allowed: a stray escape in a long text is fine.
    expect(controlFraction('a'.repeat(99) + '\x1b')).toBeCloseTo(0.01, 12);
  });
});
