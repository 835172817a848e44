// Numbers read strictly from text (flags, `--set` values): decimal only, finite, integers exact.

/** Decimal number text (optional sign, digits, fraction, exponent); no hex, no blanks, no 'Infinity'. */
export const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * A number read strictly from text: decimal only, finite. `what` names it in the error (a flag, a
 * config path). Integers must be exact: text of more than 15 digits must round-trip, so a value
 * past 2^53 is refused rather than silently rounded to its neighbour.
 */
export function parseNumberText(text: string, what: string, integer: boolean): number {
  const t = text.trim();
  const n = NUMBER_TEXT.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(n)) throw new Error(`${what} must be ${integer ? 'an integer' : 'a number'}, got '${text}'`);
  if (integer) {
    if (!Number.isInteger(n)) throw new Error(`${what} must be an integer, got '${text}'`);
    if (!Number.isSafeInteger(n))
      throw new Error(`${what}: ${text} is beyond the exact integers of a double (±${Number.MAX_SAFE_INTEGER})`);
  }
  return n;
}
