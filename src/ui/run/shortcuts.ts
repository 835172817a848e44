// Keyboard shortcuts of the run controls: Space run/pause, S step, R reset. They are page-wide
// but never taken from a field being typed in, and Space is left to a focused button or control
// (which it activates). No arrow keys: the selection stepper uses those while it has focus.

export type RunAction = 'toggle' | 'step' | 'reset';

export const SHORTCUTS: ReadonlyArray<{ key: string; label: string; action: RunAction }> = [
  { key: 'Space', label: 'run / pause', action: 'toggle' },
  { key: 'S', label: 'one step', action: 'step' },
  { key: 'R', label: 'reset', action: 'reset' },
];

const TYPING = new Set(['INPUT', 'TEXTAREA', 'SELECT']);
const ACTIVATED_BY_SPACE = new Set(['BUTTON', 'SUMMARY', 'A', 'INPUT', 'SELECT', 'TEXTAREA']);

export interface KeyLike {
  key: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  repeat: boolean;
  target: { tagName?: string; isContentEditable?: boolean; getAttribute?(name: string): string | null } | null;
}

/** The action a keydown asks for, or null when it is not a shortcut here. */
export function shortcutAction(e: KeyLike): RunAction | null {
  if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return null;
  const tag = e.target?.tagName ?? '';
  if (TYPING.has(tag) || e.target?.isContentEditable) return null;
  if (e.key === ' ') {
    const role = e.target?.getAttribute?.('role');
    return ACTIVATED_BY_SPACE.has(tag) || role === 'button' || role === 'slider' || role === 'checkbox' ? null : 'toggle';
  }
  if (e.key === 's' || e.key === 'S') return 'step';
  if (e.key === 'r' || e.key === 'R') return 'reset';
  return null;
}
