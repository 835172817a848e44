// Text ↔ number for the config's number inputs: strict (no '', 'Infinity', '0x10', '1,5').

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** The number the text spells, or NaN (which validation then reports against the field). */
export function parseNumberText(text: string): number {
  const t = text.trim();
  return NUMBER.test(t) ? Number(t) : NaN;
}

export function formatNumberText(v: unknown): string {
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}
