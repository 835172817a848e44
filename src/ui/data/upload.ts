// Checks an uploaded training text before anything else on the page changes: a .txt name, not
// empty, at most MAX_UPLOAD_BYTES, and really text (no NUL bytes, valid UTF-8, few control chars).

export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;
export const MAX_UPLOAD_LABEL = '20 MiB';
/** Above this fraction of control characters (other than tab, newline, CR, FF, VT) it is not prose. */
export const MAX_CONTROL_FRACTION = 0.01;

export type UploadCheck = { ok: true; text: string; name: string } | { ok: false; message: string };

export interface UploadedText {
  name: string;
  text: string;
  bytes: number;
}

export function formatSize(bytes: number): string {
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  if (bytes >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(1)} KiB`;
  return `${bytes} byte${bytes === 1 ? '' : 's'}`;
}

function isControl(code: number): boolean {
  if (code === 0x09 || code === 0x0a || code === 0x0b || code === 0x0c || code === 0x0d) return false;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/** Fraction of UTF-16 code units of `text` that are control characters. */
export function controlFraction(text: string): number {
  if (!text.length) return 0;
  let n = 0;
  for (let i = 0; i < text.length; i++) if (isControl(text.charCodeAt(i))) n++;
  return n / text.length;
}

export async function validateUploadedText(file: File): Promise<UploadCheck> {
  const name = file.name;
  const quoted = `“${name}”`;
  const no = (message: string): UploadCheck => ({ ok: false, message });
  if (!/\.txt$/i.test(name)) return no(`${quoted} is not a .txt file. Choose a plain-text file ending in .txt.`);
  if (file.size === 0) return no(`${quoted} is empty. Choose a .txt file with some text in it.`);
  if (file.size > MAX_UPLOAD_BYTES)
    return no(`${quoted} is ${formatSize(file.size)}; the limit is ${MAX_UPLOAD_LABEL}. Choose a smaller file or cut this one down.`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const nul = bytes.indexOf(0);
  if (nul >= 0) return no(`${quoted} contains NUL bytes (first at byte ${nul}): it is a binary file, not text.`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return no(`${quoted} is not valid UTF-8 text: it is binary or in another encoding. Save it as UTF-8 and try again.`);
  }
  const fraction = controlFraction(text);
  if (fraction > MAX_CONTROL_FRACTION)
    return no(
      `${quoted} looks binary: ${(fraction * 100).toFixed(1)}% of its characters are control characters (at most ${MAX_CONTROL_FRACTION * 100}% allowed).`,
    );
  if (text.trim().length === 0) return no(`${quoted} holds only whitespace. Choose a .txt file with some text in it.`);
  return { ok: true, text, name };
}
