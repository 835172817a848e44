// Token text for display: one token decoded alone, whitespace and control characters made
// visible, memoised per decode function (the ranges view shows up to nSel·lSel tokens).
export type DecodeFn = (ids: ArrayLike<number>) => string | null;

const VISIBLE: Record<string, string> = { '\n': '↵', '\r': '␍', '\t': '⇥' };

/** Replaces newlines, tabs and other control characters with visible symbols. */
export function visibleText(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (VISIBLE[ch]) out += VISIBLE[ch];
    else if (code < 0x20) out += String.fromCodePoint(0x2400 + code);
    else if (code === 0x7f) out += '␡';
    else out += ch;
  }
  return out;
}

const caches = new WeakMap<DecodeFn, Map<number, string | null>>();

/** The token's visible text, or null when there is no decoder or it cannot decode the id. */
export function tokenText(decode: DecodeFn | undefined, id: number): string | null {
  if (!decode) return null;
  let cache = caches.get(decode);
  if (!cache) {
    cache = new Map();
    caches.set(decode, cache);
  }
  if (!cache.has(id)) {
    const raw = decode([id]);
    cache.set(id, raw === null ? null : visibleText(raw));
  }
  return cache.get(id) ?? null;
}
