// Loads the cleaned Brown corpus text (public/data/brown.txt, written by scripts/prepare-data.mjs)
// in a page or a worker. The URL is resolved against the *page*: a worker's own location points at
// its bundled script (assets/… or /src/worker/…), so the page passes document.baseURI along.
// Relative resolution keeps the static build working from any sub-path.

export const BROWN_PATH = 'data/brown.txt';

/** The page's base URL in a window; the script's location in a worker (pass the page's instead). */
export function defaultBaseUrl(): string {
  const doc = (globalThis as { document?: Document }).document;
  return doc?.baseURI ?? globalThis.location.href;
}

export function brownUrl(baseUrl: string | URL = defaultBaseUrl()): URL {
  return new URL(BROWN_PATH, baseUrl);
}

export async function loadBrownText(baseUrl: string | URL = defaultBaseUrl()): Promise<string> {
  const url = brownUrl(baseUrl);
  const hint = "Create it with 'node scripts/prepare-data.mjs' (writes public/data/brown.txt) and rebuild.";
  let res: Response;
  try {
    res = await fetch(url);
  } catch (e) {
    throw new Error(`Could not fetch the Brown corpus from ${url.href}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!res.ok) throw new Error(`Could not load the Brown corpus from ${url.href}: HTTP ${res.status}. ${hint}`);
  // Dev servers answer a missing file with index.html (status 200): refuse HTML.
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (/html/i.test(type) || /^\s*<!doctype html/i.test(text))
    throw new Error(`${url.href} returned an HTML page, not the corpus text. ${hint}`);
  if (text.length === 0) throw new Error(`${url.href} is empty. ${hint}`);
  return text;
}
