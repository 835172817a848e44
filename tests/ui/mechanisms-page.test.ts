// The page for the window, MoBA and DSA (issue 21): the config panel's fields, defaults and errors,
// the keys-read figures it derives (counted here position by position, independently of
// src/definitions/keys-read.ts), "How it works" from the config's numbers, and the stepper's
// geometry and reasons per mechanism on real selections (the float64 NSA twin computes MoBA
// exactly as mobaAsNsa; DSA's top-k twin picks tokens from index scores).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { tokenSelectionAsNsa } from '../../src/definitions/dsa-config';
import { mobaAsNsa, windowAsNsa } from '../../src/definitions/mechanisms';
import type { ModelConfig } from '../../src/definitions/model-config';
import { numSelBlocks } from '../../src/definitions/nsa-blocks';
import { type SelectionSnapshot, snapshotIssues, snapshotRanges } from '../../src/definitions/selection-snapshot';
import { snapshotSelectionOf } from '../../src/definitions/selection-snapshot';
import { selectTokensRef } from '../../src/reference/dsa/topk';
import type { RunConfig } from '../../src/train/config';
import { ConfigPanel } from '../../src/ui/config/ConfigPanel';
import { configFacts, mechanismFacts } from '../../src/ui/config/derived';
import { budgetNote, mechanismReads } from '../../src/ui/config/DerivedFacts';
import { editConfig } from '../../src/ui/config/edit';
import { errorDomId, fieldDomId, SECTIONS } from '../../src/ui/config/fields';
import { parseNumberText } from '../../src/ui/config/number-text';
import { isRunConfigValid, runConfigErrors } from '../../src/ui/config/parse';
import { setPath } from '../../src/ui/config/paths';
import { UI_PRESET_NAMES, uiPreset } from '../../src/ui/config/presets';
import { ExplainPanel } from '../../src/ui/explain/ExplainPanel';
import { mechanismExplanation } from '../../src/ui/explain/mechanism-text';
import { whyBlock } from '../../src/ui/stepper/cell-facts';
import { cellKind, windowSpan } from '../../src/ui/stepper/geometry';
import { HeatmapTooltip } from '../../src/ui/stepper/HeatmapTooltip';
import { contextLine } from '../../src/ui/stepper/RangeList';
import { SelectionStepper } from '../../src/ui/stepper/SelectionStepper';
import { selectionWhy } from '../../src/ui/stepper/why';
import { WindowRange } from '../../src/ui/stepper/WindowRange';
import { createPlaygroundStore } from '../../src/ui/store';
import { decodeConfigHash, encodeConfigHash } from '../../src/ui/url-state';
import { mulberry32 } from '../../src/util/random';
import { refSnapshots } from './stepper-fixtures';

const KINDS = ['window', 'moba', 'dsa'] as const;
/** config-fuzz-panel.test.ts's values (importing that file would run its tests here too). */
const FUZZ_TEXTS = ['0', '-1', '1e308', 'NaN', '99999999', 'abc'] as const;
const render = (c: RunConfig) => renderToStaticMarkup(createElement(ConfigPanel, { value: c, onChange: () => {} }));

/** Key positions query t reads, listed one by one from the mechanism's definition (docs/nsa-spec.md 15, docs/dsa-spec.md 3). */
function positionsRead(t: number, m: ModelConfig): number {
  const read = new Set<number>();
  if (m.attention === 'window') for (let s = Math.max(0, t - m.window!.w + 1); s <= t; s++) read.add(s);
  if (m.attention === 'moba') {
    const B = m.moba!.blockSize;
    const own = Math.floor(t / B);
    // Its own block up to t, and k − 1 of the complete earlier blocks (any of them: all are full).
    for (let s = own * B; s <= t; s++) read.add(s);
    for (let j = own - 1; j >= Math.max(0, own - (m.moba!.topK - 1)); j--) for (let s = j * B; s < (j + 1) * B; s++) read.add(s);
  }
  if (m.attention === 'dsa') for (let s = 0; s <= t && read.size < m.dsa!.topK; s++) read.add(s);
  return read.size;
}

describe('config panel: window, MoBA and DSA', () => {
  it('switching any preset to each mechanism fills in valid options; the panel shows its fields and tooltips', () => {
    for (const name of UI_PRESET_NAMES) {
      for (const kind of KINDS) {
        const c = editConfig(uiPreset(name), 'model.attention', kind);
        expect(runConfigErrors(c), `${name} → ${kind}`).toEqual([]);
        expect(c.model[kind], `${name} → ${kind}`).toBeDefined();
      }
    }
    const tiny = uiPreset('tiny');
    const nsa = tiny.model.nsa!;
    expect(editConfig(tiny, 'model.attention', 'window').model.window).toEqual({ w: Math.min(nsa.w, tiny.model.seqLen) });
    expect(editConfig(tiny, 'model.attention', 'moba').model.moba).toEqual({ blockSize: nsa.lSel, topK: nsa.nSel });
    const moba = render(editConfig(tiny, 'model.attention', 'moba'));
    for (const p of ['model.moba.blockSize', 'model.moba.topK']) expect(moba).toContain(`id="${fieldDomId(p)}"`);
    expect(moba).not.toContain(`id="${fieldDomId('model.window.w')}"`);
    expect(moba).toContain('Used with DSA attention only');
    expect(moba).toContain('Costs at most k·B keys per query');
    const dsa = render(editConfig(tiny, 'model.attention', 'dsa'));
    for (const f of ['topK', 'indexHeads', 'indexDim', 'warmupSteps', 'lossWeight'])
      expect(dsa).toContain(`id="${fieldDomId(`model.dsa.${f}`)}"`);
    expect(dsa).toContain('every query reads all t + 1 indexer keys of this width');
  });

  it('errors show at the field: window wider than T, MoBA k beyond the blocks, DSA indexDim above dk', () => {
    const tiny = uiPreset('tiny');
    const T = tiny.model.seqLen;
    const cases: Array<[string, RunConfig]> = [
      ['model.window.w', setPath(editConfig(tiny, 'model.attention', 'window'), 'model.window.w', T + 1)],
      ['model.moba.topK', setPath(editConfig(tiny, 'model.attention', 'moba'), 'model.moba.topK', 99)],
      ['model.moba.blockSize', setPath(editConfig(tiny, 'model.attention', 'moba'), 'model.moba.blockSize', T + 1)],
      ['model.dsa.indexDim', setPath(editConfig(tiny, 'model.attention', 'dsa'), 'model.dsa.indexDim', tiny.model.dk + 2)],
      ['model.dsa.lossWeight', setPath(editConfig(tiny, 'model.attention', 'dsa'), 'model.dsa.lossWeight', 0)],
    ];
    for (const [path, c] of cases) {
      expect(
        runConfigErrors(c).map((e) => e.field),
        path,
      ).toContain(path);
      expect(render(c), path).toContain(`id="${errorDomId(path)}"`);
    }
  });

  it('a partial options object is refused as the link and file reader refuse it, whatever the attention', () => {
    const c = setPath(uiPreset('tiny'), 'model.moba.topK', 3); // an NSA model with model.moba = {topK: 3}
    expect(c.model.attention).toBe('nsa');
    expect(runConfigErrors(c)).toContainEqual({ field: 'model.moba.blockSize', message: 'is missing' });
    expect(isRunConfigValid(c)).toBe(false);
    // A whole block of an attention the model does not use is kept and not validated (as model.nsa of a dense model).
    const kept = setPath(uiPreset('tiny'), 'model.moba', { blockSize: 8, topK: 99 });
    expect(runConfigErrors(kept)).toEqual([]);
    // Valid MoBA, window and DSA configs go through the URL bit for bit.
    for (const kind of KINDS) {
      const m = editConfig(uiPreset('mqar-tiny'), 'model.attention', kind);
      const back = decodeConfigHash(`#${encodeConfigHash(m, 'tiny')}`);
      expect(back.error, kind).toBeUndefined();
      expect(back.config).toEqual(m);
    }
  });

  it('keys read: last query and mean over t equal the positions counted one by one', () => {
    const r = mulberry32(21);
    for (let i = 0; i < 60; i++) {
      const T = 1 + Math.floor(r() * 300);
      const kind = KINDS[i % 3];
      const m = { ...uiPreset('tiny').model, seqLen: T, attention: kind } as ModelConfig;
      if (kind === 'window') m.window = { w: 1 + Math.floor(r() * T) };
      if (kind === 'moba') {
        const B = 1 + Math.floor(r() * T);
        m.moba = { blockSize: B, topK: 1 + Math.floor(r() * Math.ceil(T / B)) };
      }
      if (kind === 'dsa') m.dsa = { indexHeads: 2, indexDim: 8, topK: 1 + Math.floor(r() * 2 * T), warmupSteps: 3, lossWeight: 1 };
      const f = mechanismFacts(m)!;
      let sum = 0;
      for (let t = 0; t < T; t++) sum += positionsRead(t, m);
      expect(f.last, JSON.stringify(m.moba ?? m.window ?? m.dsa)).toBe(positionsRead(T - 1, m));
      expect(f.mean).toBeCloseTo(sum / T, 10);
      expect([f.denseLast, f.denseMean]).toEqual([T, (T + 1) / 2]);
      expect(f.indexLast).toBe(kind === 'dsa' ? T : 0);
    }
    // The spec's example (B = 8, k = 3): t = 40 reads 1 + 2·8 = 17 keys.
    const moba = { ...uiPreset('tiny').model, seqLen: 41, attention: 'moba', moba: { blockSize: 8, topK: 3 } } as ModelConfig;
    const f = mechanismFacts(moba)!;
    expect(f.last).toBe(17);
    expect(mechanismReads(f, 'last')).toBe('17 in its blocks vs 41 dense (41%)');
    expect(budgetNote(f)).toContain('at most k·B = 24 keys');
    expect(budgetNote(f)).toContain('of the 6 blocks of T');
    // The panel's facts: only for a valid model of that attention.
    const c = editConfig(uiPreset('tiny'), 'model.attention', 'dsa');
    expect(configFacts(c, runConfigErrors(c)).mechanism?.attention).toBe('dsa');
    expect(configFacts(uiPreset('tiny'), []).mechanism).toBeNull();
    const bad = setPath(c, 'model.dsa.topK', 0);
    expect(configFacts(bad, runConfigErrors(bad)).mechanism).toBeNull();
    expect(render(c)).toContain('indexer keys of width d_I scored');
  });
});

describe('fuzz: every field of the window, MoBA and DSA × 0, −1, 1e308, NaN, 99999999, text', () => {
  it('the panel renders each value, refused at its field or accepted; the explanation of the last valid config renders', () => {
    for (const kind of KINDS) {
      const base = editConfig(uiPreset('tiny'), 'model.attention', kind);
      const store = createPlaygroundStore({ config: base, preset: 'tiny' });
      const fields = SECTIONS.find((x) => x.id === kind)!.fields.map((f) => f.path);
      expect(fields.length).toBeGreaterThan(0);
      for (const path of fields) {
        for (const text of FUZZ_TEXTS) {
          const draft = editConfig(base, path, parseNumberText(text));
          store.getState().setConfig(draft);
          const errors = runConfigErrors(draft);
          const html = render(draft);
          if (errors.length) expect(html, `${path} = ${text}`).toContain(`id="${errorDomId(path)}"`);
          expect(
            errors.every((e) => e.field === path),
            `${path} = ${text}: ${JSON.stringify(errors)}`,
          ).toBe(true);
          const m = store.getState().validConfig.model;
          const explain = renderToStaticMarkup(createElement(ExplainPanel, { nsa: m.nsa, T: m.seqLen, dense: false, model: m }));
          expect(explain).toContain('data-testid="explain-reads"');
        }
      }
    }
  });
});

describe('"How it works" from the config\'s numbers', () => {
  const base = { ...uiPreset('tiny').model, seqLen: 64 };
  it('window: the last w keys', () => {
    const e = mechanismExplanation({ ...base, attention: 'window', window: { w: 16 } }, 40)!;
    expect(e.title).toBe('How the sliding window works');
    expect(e.steps[0]).toContain('= 25 … 40');
    expect(e.reads).toBe('Query t reads the last w = 16 keys: min(w, t + 1) = 16 keys, where dense attention reads t + 1 = 41.');
    expect(mechanismExplanation({ ...base, attention: 'window', window: { w: 16 } }, 3)!.reads).toContain('min(w, t + 1) = 4 keys');
  });

  it('MoBA: N complete blocks scored by q·mean(K), its own plus the top k − 1, at most k·B keys', () => {
    const e = mechanismExplanation({ ...base, attention: 'moba', moba: { blockSize: 8, topK: 3 } }, 40)!;
    expect(e.intro).toContain('8 blocks of B = 8');
    expect(e.steps[0]).toContain('block ⌊t / B⌋ = 5');
    expect(e.steps[0]).toContain('positions 40 … 40 (1 key)');
    expect(e.steps[1]).toContain('scores the 5 complete earlier blocks of B by q·mean(K)');
    expect(e.steps[1]).toContain('top k − 1 = 2');
    expect(e.steps[2]).toContain('at most k·B = 24 keys');
    expect(e.reads).toBe('Query t reads 1 + 2·8 = 17 keys (at most k·B = 24), where dense attention reads t + 1 = 41.');
    // t = 12: one candidate, it fits.
    const early = mechanismExplanation({ ...base, attention: 'moba', moba: { blockSize: 8, topK: 3 } }, 12)!;
    expect(early.steps[1]).toContain('all 1 fit, so nothing is left out');
    expect(early.reads).toContain('5 + 1·8 = 13 keys');
  });

  it('DSA: H_I × d_I indexer over every earlier token, top k, W warm-up steps', () => {
    const dsa = { indexHeads: 4, indexDim: 16, topK: 20, warmupSteps: 30, lossWeight: 0.5 };
    const e = mechanismExplanation({ ...base, attention: 'dsa', dsa }, 40)!;
    expect(e.steps[0]).toContain('A lightning indexer of H_I = 4 heads × d_I = 16 scores every earlier token');
    expect(e.steps[0]).toContain('41 indexer keys');
    expect(e.steps[1]).toContain('The top k = 20 tokens by score are read (21 of its 41 candidates are left out)');
    expect(e.steps[2]).toContain('The first W = 30 steps are a dense warm-up in which only the indexer learns');
    expect(e.steps[2]).toContain('λ = 0.5');
    expect(e.reads).toContain('min(k, t + 1) = 20 keys');
    expect(mechanismExplanation({ ...base, attention: 'dsa', dsa }, 5)!.steps[1]).toContain('only 6 candidates, so it reads all of them');
    expect(mechanismExplanation({ ...base, attention: 'nsa' }, 5)).toBeNull();
    expect(mechanismExplanation({ ...base, attention: 'dense' }, 5)).toBeNull();
  });

  it('the panel renders the mechanism at the last query, NSA and dense as before', () => {
    const m = { ...base, attention: 'moba' as const, moba: { blockSize: 8, topK: 3 } };
    const html = renderToStaticMarkup(createElement(ExplainPanel, { nsa: m.nsa, T: 64, dense: false, model: m }));
    expect(html).toContain('How MoBA works');
    expect(html).toContain('data-attention="moba"');
    expect(html).toContain('Query t reads 8 + 2·8 = 24 keys');
    const nsaHtml = renderToStaticMarkup(createElement(ExplainPanel, { nsa: base.nsa, T: 64, dense: false, model: base }));
    expect(nsaHtml).toContain('How NSA works');
  });
});

/** A snapshot of one MoBA or DSA row set by hand. */
function handSnapshot(mechanism: 'moba' | 'dsa', cfg: SelectionSnapshot['cfg'], T: number, rows: Record<number, [number[], number[]]>) {
  const nb = numSelBlocks(T, cfg);
  const s: SelectionSnapshot = {
    step: 4,
    layer: 0,
    group: 0,
    T,
    cfg,
    H: 2,
    G: 1,
    tokens: Int32Array.from({ length: T }, (_, t) => t % 50),
    sel: new Int32Array(T * cfg.nSel).fill(-1),
    scores: new Float32Array(T * nb),
    mechanism,
  };
  for (const [t, [sel, sc]] of Object.entries(rows)) {
    s.sel.set(sel, Number(t) * cfg.nSel);
    s.scores!.set(sc, Number(t) * nb);
  }
  return s;
}

describe('stepper per mechanism', () => {
  it('MoBA: the spec example (B = 8, k = 3, t = 40): own block forced, blocks 1 and 2 by score, 2 over 3 by the tie', () => {
    const cfg = mobaAsNsa({ blockSize: 8, topK: 3 });
    const s = handSnapshot('moba', cfg, 48, {
      40: [
        [1, 2, 5],
        [0.1, 0.4, 0.2, 0.2, 0.1, 0],
      ],
    });
    expect(snapshotRanges(s, 40).map((r) => [r.start, r.end])).toEqual([
      [8, 24],
      [40, 41],
    ]);
    const row = s.sel.subarray(40 * 3, 41 * 3);
    expect([0, 1, 2, 3, 5].map((j) => cellKind(40, j, row, cfg))).toEqual(['candidate', 'selected', 'selected', 'candidate', 'forced']);
    const why = selectionWhy(s, 40);
    expect([why.scored, why.slots, why.bestLeftOut]).toEqual([5, 2, { index: 3, score: Math.fround(0.2) }]);
    expect(why.items.map((i) => [i.index, i.reason, i.rank, i.tie, i.start, i.end])).toEqual([
      [1, 'score', 1, false, 8, 16],
      [2, 'score', 2, true, 16, 24],
      [5, 'forced', null, false, 40, 41],
    ]);
    expect(why.items[2].text).toBe('its own block: always read, cut at t (1 of 8 keys)');
    expect(why.items[1].text).toContain('tied with block 3, left out: the lower index wins');
    expect(contextLine(s, 40, { lo: 40, hi: 40 }, -1)).toBe('own block [40, 41) · 5 complete earlier blocks scored by their mean key');
    expect(whyBlock(s, 40, 5)).toBe("Always read: block 5 is the query's own block (MoBA), cut at t, whatever its score.");
    const tip = renderToStaticMarkup(createElement(HeatmapTooltip, { snapshot: s, t: 40, j: 3, x: 0, y: 0, width: 600 }));
    expect(tip).toContain('ties block 2');
    expect(tip).not.toContain('window');
    const html = renderToStaticMarkup(createElement(SelectionStepper, { snapshots: [s] }));
    expect(html).toContain('data-mechanism="moba"');
    expect(html).toContain('MoBA B=8 k=3');
    expect(html).not.toContain('window start');
  });

  it('MoBA on the float64 twin: every row reads its own block and the top k − 1 by score, ranks 1 … k − 1', () => {
    const moba = { blockSize: 4, topK: 3 };
    const { snaps } = refSnapshots({ T: 37, H: 4, G: 2, dk: 8, dv: 8 }, mobaAsNsa(moba), 9);
    for (const s of snaps) {
      s.mechanism = 'moba';
      delete s.gates;
      expect(snapshotIssues(s)).toEqual([]);
      for (let t = 0; t < s.T; t++) {
        const why = selectionWhy(s, t);
        const own = Math.floor(t / 4);
        expect(why.items.filter((i) => i.reason === 'forced').map((i) => i.index)).toEqual([own]);
        expect(why.slots).toBe(Math.min(2, own));
        const ranks = why.items.filter((i) => i.reason === 'score').map((i) => i.rank!);
        expect(ranks.sort((a, b) => a - b)).toEqual(Array.from({ length: why.slots }, (_, i) => i + 1));
      }
    }
  });

  it('DSA: tokens by index score, ties to the lower token, nothing forced; the warm-up noted', () => {
    const T = 6;
    const k = 3;
    const I = new Float64Array(T * T);
    I.set([0.2, 0.9, 0, 0.9, 0, 0.1], 5 * T); // docs/dsa-spec.md section 3: → 0, 1, 3
    I.set([0.5, 0.5, 0.5, 0, 0], 4 * T); // three equal scores: with k = 2, tokens 0 and 1 win over 2 by their index
    const sel = selectTokensRef(I, T, 1, k);
    const cfg = tokenSelectionAsNsa(k);
    const s = handSnapshot('dsa', cfg, T, {});
    s.sel.set(sel);
    s.scores = Float32Array.from(I);
    s.phase = 'warmup';
    expect([...s.sel.subarray(5 * k, 6 * k)]).toEqual([0, 1, 3]);
    const why = selectionWhy(s, 5);
    expect(why.items.map((i) => [i.index, i.rank, i.tie])).toEqual([
      [0, 3, false],
      [1, 1, false],
      [3, 2, false],
    ]);
    expect(why.items[1].text).toBe('index score I = 0.9000, rank 1 of 6 tokens scored');
    expect(why.bestLeftOut).toEqual({ index: 5, score: Math.fround(0.1) });
    // Row 1: I = [0, 0], both read (take = 2).
    expect(selectionWhy(s, 1).items.map((i) => [i.index, i.rank])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    // With k = 2 the tie at 0.5 goes to tokens 0 and 1; both are marked as having won it over token 2.
    const s2 = { ...s, cfg: tokenSelectionAsNsa(2), sel: selectTokensRef(I, T, 1, 2) };
    const w2 = selectionWhy(s2, 4);
    expect(w2.items.map((i) => [i.index, i.tie])).toEqual([
      [0, true],
      [1, true],
    ]);
    expect(w2.bestLeftOut).toEqual({ index: 2, score: 0.5 });
    expect(w2.items[1].text).toContain('tied with token 2, left out: the lower index wins');
    expect(snapshotRanges(s, 5).map((r) => [r.start, r.end])).toEqual([
      [0, 2],
      [3, 4],
    ]);
    expect(contextLine(s, 5, { lo: 5, hi: 5 }, 5)).toBe('the indexer scored all 6 tokens [0, 6) with its narrow keys');
    const html = renderToStaticMarkup(createElement(SelectionStepper, { snapshots: [s] }));
    expect(html).toContain('DSA k=3 tokens');
    expect(html).toContain('data-testid="stepper-dsa-warmup"');
  });

  it('the window: its range is [t − w + 1, t]; snapshots only for the mechanisms that select', () => {
    expect(windowSpan(40, windowAsNsa({ w: 16 }))).toEqual({ lo: 25, hi: 40 });
    expect(windowSpan(3, windowAsNsa({ w: 16 }))).toEqual({ lo: 0, hi: 3 });
    const range = renderToStaticMarkup(createElement(WindowRange, { window: { w: 16 }, T: 64 }));
    expect(range).toContain('data-lo="48" data-hi="64"');
    expect(range.replace(/<!-- -->/g, '')).toContain('t = 63 reads [48, 64): 16 keys (dense: 64)');
    const m = uiPreset('tiny').model;
    expect(snapshotSelectionOf({ ...m, attention: 'window', window: { w: 8 } })).toBeNull();
    expect(snapshotSelectionOf({ ...m, attention: 'dense' })).toBeNull();
    expect(snapshotSelectionOf({ ...m, attention: 'moba', moba: { blockSize: 8, topK: 3 } })).toEqual({
      cfg: mobaAsNsa({ blockSize: 8, topK: 3 }),
      mechanism: 'moba',
    });
    expect(
      snapshotSelectionOf({ ...m, attention: 'dsa', dsa: { indexHeads: 2, indexDim: 8, topK: 5, warmupSteps: 0, lossWeight: 1 } })?.cfg,
    ).toEqual(tokenSelectionAsNsa(5));
  });
});
