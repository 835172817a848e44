// A link to one run's view: `?run=<library id>` beside the config hash and the chart settings.
// Opening a run from the library writes it into the address bar; loading a page with it opens that
// run's curves once the library is read (the library lives in this browser's IndexedDB).
export function runIdFromSearch(search: string): string | null {
  const id = new URLSearchParams(search).get('run');
  return id && /^[\w-]{1,100}$/.test(id) ? id : null;
}

/** `search` with run=id (or without run when id is null); other parameters kept. */
export function searchWithRun(search: string, id: string | null): string {
  const q = new URLSearchParams(search);
  if (id === null) q.delete('run');
  else q.set('run', id);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Puts the run into the address bar (no history entry). */
export function writeRunToUrl(id: string | null): void {
  if (typeof history === 'undefined') return;
  const search = searchWithRun(location.search, id);
  if (search !== location.search) history.replaceState(history.state, '', `${location.pathname}${search}${location.hash}`);
}
