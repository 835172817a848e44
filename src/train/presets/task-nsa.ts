// The NSA configuration of the synthetic-task presets (recall, passkey): T = 64 in eight selection
// blocks of 8, block 0 and the query's own block forced, three blocks selected, a window of 8 — so
// what lies further back must be found by content.
export const TASK_NSA = {
  l: 8,
  d: 4,
  lSel: 8,
  nSel: 3,
  w: 8,
  phi: 'avg',
  forceInit: true,
  forceLocal: 1,
  sharedKV: false,
  gates: { kind: 'none' },
} as const;
