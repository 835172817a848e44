// Snapshot ranges on real selections (float64 reference), their validation, and decode traces
// (decode = prefill: a trace's snapshot equals the prefill snapshot row for row).
import { describe, expect, it } from 'vitest';

import { forcedBlocks, numSelBlocks } from '../../src/definitions/nsa-blocks';
import {
  checkSnapshot,
  type DecodeSelection,
  decodeSelectionRanges,
  decodeSelectionsOf,
  decodeTraceSnapshots,
  selectionsFromLayers,
  type SelectionSnapshot,
  snapshotIssues,
  snapshotRanges,
} from '../../src/definitions/selection-snapshot';
import { CASES, decodeAll } from '../nsa/helpers';
import { refSnapshots } from './stepper-fixtures';

const clone = (s: SelectionSnapshot): SelectionSnapshot => ({ ...s, sel: s.sel.slice() });

describe('snapshotRanges on reference selections', () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))('%s: valid, merged, covering exactly the selection, forced flagged', (_n, i) => {
    const { c, shape } = CASES[i];
    const { snaps } = refSnapshots(shape, c, 100 + i);
    let forcedSeen = 0;
    for (const s of snaps) {
      checkSnapshot(s);
      expect(snapshotIssues(s)).toEqual([]);
      for (let t = 0; t < s.T; t++) {
        const ranges = snapshotRanges(s, t);
        const row = [...s.sel.subarray(t * c.nSel, (t + 1) * c.nSel)].filter((j) => j >= 0);
        expect(row.length).toBe(Math.min(c.nSel, Math.floor(t / c.lSel) + 1));
        // Every range valid; ranges ascending and separated (adjacent blocks merged).
        ranges.forEach((r, k) => {
          expect(0 <= r.start && r.start < r.end && r.end <= t + 1, `t=${t} [${r.start}, ${r.end})`).toBe(true);
          if (k > 0) expect(r.start).toBeGreaterThan(ranges[k - 1].end);
          expect(r.blocks.length).toBe(r.forced.length);
          expect(r.start).toBe(r.blocks[0] * c.lSel);
        });
        // The covered positions are exactly the selected blocks' positions ≤ t.
        const covered = new Set<number>();
        for (const r of ranges) for (let p = r.start; p < r.end; p++) covered.add(p);
        const expected = new Set<number>();
        for (const j of row) for (let p = j * c.lSel; p < Math.min((j + 1) * c.lSel, t + 1); p++) expected.add(p);
        expect([...covered].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b));
        // Blocks across ranges are the selection; forced flags are exactly the spec's forced blocks.
        expect(ranges.flatMap((r) => r.blocks)).toEqual(row);
        const forced = forcedBlocks(t, c);
        const flagged = ranges.flatMap((r) => r.blocks.filter((_, m) => r.forced[m]));
        expect(flagged.sort((a, b) => a - b)).toEqual([...forced].sort((a, b) => a - b));
        forcedSeen += flagged.length;
      }
    }
    if (c.forceInit || c.forceLocal > 0) expect(forcedSeen).toBeGreaterThan(0);
  });
});

describe('invalid selections throw (never clamped) and are listed', () => {
  const { c, shape } = CASES[0];
  const base = refSnapshots(shape, c, 3).snaps[1];
  const t = 30; // nb(30) = 4 candidates, nSel = 3
  const cases: Array<[string, number[]]> = [
    ['a block after t', [0, 2, 4]],
    ['descending', [3, 0, 2]],
    ['repeated', [0, 3, 3]],
    ['block after padding', [0, -1, 3]],
    ['below −1', [0, -2, 3]],
  ];
  it.each(cases)('%s', (_n, row) => {
    const s = clone(base);
    s.sel.set(row, t * c.nSel);
    expect(() => snapshotRanges(s, t)).toThrow(/selectionRanges/);
    const issues = snapshotIssues(s);
    expect(issues.map((x) => x.t)).toEqual([t]);
  });

  it('a forced block missing is an issue (the ranges themselves are valid)', () => {
    const s = clone(base);
    // Block 0 (forceInit) dropped: [2, 3, −1] is a valid but non-conforming selection.
    s.sel.set([2, 3, -1], t * c.nSel);
    expect(snapshotRanges(s, t)).toEqual([{ start: 16, end: 31, blocks: [2, 3], forced: [false, true] }]);
    expect(snapshotIssues(s)).toEqual([{ t, message: 'forced block 0 not selected' }]);
  });

  it('checkSnapshot names wrong lengths', () => {
    expect(() => checkSnapshot({ ...base, sel: base.sel.subarray(1) })).toThrow(/sel has/);
    expect(() => checkSnapshot({ ...base, scores: new Float32Array(3) })).toThrow(/scores has/);
    expect(() => checkSnapshot({ ...base, tokens: new Int32Array(2) })).toThrow(/tokens has/);
    expect(() => checkSnapshot({ ...base, group: 2 })).toThrow(/group 2/);
    expect(() => checkSnapshot({ ...base, gates: new Float32Array(5) })).toThrow(/gates has/);
  });
});

describe('decode traces', () => {
  it.each([0, 7, 8, 11].map((i) => [CASES[i].name, i] as const))('%s: decode snapshots equal the prefill snapshots', (_n, i) => {
    const { c, shape } = CASES[i];
    const { H, G, T } = shape;
    const { inp, snaps } = refSnapshots(shape, c, 200 + i);
    const steps = decodeAll(inp, shape, c);
    // Two layers: the same decoder steps stand in for layer 1 too.
    const selections: DecodeSelection[] = steps.flatMap((st) =>
      decodeSelectionsOf(
        {
          t: st.t,
          nsa: [0, 1].map((layer) => ({
            layer,
            selection: st.selection,
            scores: st.scores,
            gates: inp.gates.subarray(st.t * H * 3, (st.t + 1) * H * 3),
          })),
        },
        c,
        H,
        G,
      ),
    );
    const tokens = [...snaps[0].tokens];
    const dec = decodeTraceSnapshots({ tokens, selections }, { cfg: c, H, G, layers: 2, step: 9 });
    expect(dec.map((s) => [s.layer, s.group])).toEqual([0, 1].flatMap((l) => Array.from({ length: G }, (_, g) => [l, g])));
    for (const d of dec) {
      const p = snaps[d.group];
      checkSnapshot(d);
      expect(d.source).toBe('decode');
      expect(d.recorded).toBeUndefined();
      expect([...d.sel]).toEqual([...p.sel]);
      expect([...d.gates!]).toEqual([...p.gates!]);
      // Scores: each decode row holds nb(t) candidates; the prefill row has zeros after them.
      const nb = numSelBlocks(T, c);
      for (let t = 0; t < T; t++) {
        const cand = Math.floor(t / c.lSel) + 1;
        for (let j = 0; j < nb; j++) {
          const want = j < cand ? p.scores![t * nb + j] : 0;
          expect(Math.abs(d.scores![t * nb + j] - want), `t=${t} j=${j}`).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want)));
        }
        expect(
          decodeSelectionRanges(
            selections.find((x) => x.t === t && x.group === d.group && x.layer === d.layer)!,
            c,
          ),
        ).toEqual(snapshotRanges(p, t));
      }
    }
  });

  it('rows without a selection are unrecorded: no ranges, no issues', () => {
    const { c, shape } = CASES[0];
    const { inp } = refSnapshots(shape, c, 5);
    const steps = decodeAll(inp, shape, c);
    const P = 20;
    // Only the queries that produced generated tokens: t ≥ P − 1 (as the worker streams them).
    const selections = steps.filter((st) => st.t >= P - 1).flatMap((st) => selectionsFromLayers(st.t, [st.selection], c, shape.G));
    const [s0] = decodeTraceSnapshots(
      { tokens: Array.from({ length: shape.T }, (_, i) => i), selections },
      { cfg: c, H: shape.H, G: shape.G, layers: 1, step: 0 },
    );
    expect([...s0.recorded!]).toEqual(Array.from({ length: shape.T }, (_, t) => (t >= P - 1 ? 1 : 0)));
    expect(s0.scores).toBeNull();
    expect(snapshotIssues(s0)).toEqual([]);
    expect(() => snapshotRanges(s0, P - 2)).toThrow(/not recorded/);
    expect(snapshotRanges(s0, P - 1).length).toBeGreaterThan(0);
  });

  it('a selection recorded twice or past the tokens throws', () => {
    const { c } = CASES[0];
    const d: DecodeSelection = { t: 3, layer: 0, group: 0, blocks: [0, -1, -1] };
    const o = { cfg: c, H: 4, G: 2, layers: 1, step: 0 };
    expect(() => decodeTraceSnapshots({ tokens: [1, 2, 3, 4], selections: [d, { ...d }] }, o)).toThrow(/twice/);
    expect(() => decodeTraceSnapshots({ tokens: [1, 2, 3], selections: [d] }, o)).toThrow(/outside/);
    expect(() => decodeTraceSnapshots({ tokens: [1, 2, 3, 4], selections: [{ ...d, blocks: [0] }] }, o)).toThrow(/expected nSel/);
  });
});
