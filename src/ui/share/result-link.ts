// "Share result" as a link, where it fits: the result file's JSON gzipped (CompressionStream) and
// base64url-encoded into `?result=` of the page's address. Opening such a link shows the result in
// the shared-result view, in any browser. A result too long for a link (over MAX_LINK_CHARS) is
// shared as a file instead.

/** The longest `result` parameter offered as a link (links pasted into chats and issues stay usable). */
export const MAX_LINK_CHARS = 32_000;

async function pipe(bytes: Uint8Array<ArrayBuffer>, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

function toBase64Url(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** The `result` parameter for a result file's JSON text. */
export async function encodeResultParam(json: string): Promise<string> {
  return toBase64Url(await pipe(new TextEncoder().encode(json), new CompressionStream('gzip')));
}

/** The result file's JSON text of a `result` parameter; throws when it is not one. */
export async function decodeResultParam(param: string): Promise<string> {
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = fromBase64Url(param);
  } catch {
    throw new Error('the link is damaged (not base64url)');
  }
  try {
    return new TextDecoder().decode(await pipe(bytes, new DecompressionStream('gzip')));
  } catch {
    throw new Error('the link is damaged (cut short?)');
  }
}

/** The `result` parameter of a page address's search part, or null. */
export function resultParam(search: string): string | null {
  return new URLSearchParams(search).get('result');
}

/** This page's address with `result=param` (the config hash and other parameters dropped: the result holds its config). */
export function resultLink(pageUrl: string, param: string): string {
  const u = new URL(pageUrl);
  u.search = `?result=${param}`;
  u.hash = '';
  return u.toString();
}
