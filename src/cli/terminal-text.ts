// Text from files (checkpoint metadata, config names, run names) printed to a terminal: control
// characters (C0, DEL, C1, and the bidi overrides) are written as escapes, so a crafted checkpoint
// cannot move the cursor, clear the screen or retitle the terminal.

/** `s` with every control character as \n, \t, \r or \x.. / \u.... escapes (line breaks kept with keepNewlines). */
export function escapeControl(s: string, o: { keepNewlines?: boolean } = {}): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return o.keepNewlines ? c : '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
