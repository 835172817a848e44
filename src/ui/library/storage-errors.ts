// Browser-storage failures as messages the page shows (never swallowed): a full quota says what to
// do about it; anything else keeps the browser's own message.

/** IndexedDB's quota failure: a DOMException named QuotaExceededError (legacy code 22). */
export function isQuotaError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { name, code } = e as { name?: unknown; code?: unknown };
  return name === 'QuotaExceededError' || code === 22;
}

/** "<action> failed: the browser's storage for this page is full (…)" or "<action> failed: <message>". */
export function storageErrorMessage(action: string, e: unknown): string {
  if (isQuotaError(e))
    return `${action} failed: the browser's storage for this page is full (QuotaExceededError). Delete runs from the run library or download their checkpoints, then try again.`;
  const detail = e instanceof Error ? e.message || e.name : String(e);
  return `${action} failed: ${detail}`;
}
