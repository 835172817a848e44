// Issue 24, items 1 and 2, the pure parts: forcedBlocks is O(result) (a huge forceLocal typed into
// the page does not loop per forced block) and equals the spec's definition; the store's last valid
// config never takes an invalid draft; an edit's errors at related fields also show at the edited
// field; the panel error boundary's note names the panel, the error and the fields, and offers
// to revert; a file that is not a checkpoint is named as such before the decoder sees it.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { forcedBlocks } from '../../src/definitions/nsa-blocks';
import type { NsaConfig } from '../../src/definitions/nsa-config';
import { paramSpecs } from '../../src/definitions/params';
import { initParams } from '../../src/model/init';
import { CHECKPOINT_FORMAT, encodeCheckpoint } from '../../src/train/checkpoint/checkpoint';
import { preset } from '../../src/train/presets/presets';
import { fieldsAtFault, PanelBoundary, PanelFailure } from '../../src/ui/components/PanelBoundary';
import { editConfig } from '../../src/ui/config/edit';
import { editCauses, groupErrors, withEditCauses } from '../../src/ui/config/errors';
import { runConfigErrors } from '../../src/ui/config/parse';
import { uiPreset } from '../../src/ui/config/presets';
import { explainDiagram } from '../../src/ui/explain/diagram';
import { notACheckpoint } from '../../src/ui/run/checkpoint-file';
import { createPlaygroundStore } from '../../src/ui/store';

/** The spec's definition, written plainly: 0 if forceInit, then bt, bt−1, … (forceLocal of them), ≥ 0, deduped. */
function forcedReference(t: number, c: NsaConfig): number[] {
  const out: number[] = [];
  if (c.forceInit) out.push(0);
  const bt = Math.floor(t / c.lSel);
  for (let m = 0; m < c.forceLocal; m++) if (bt - m >= 0 && !out.includes(bt - m)) out.push(bt - m);
  return out;
}

const nsa = (o: Partial<NsaConfig>): NsaConfig => ({ ...uiPreset('tiny').model.nsa!, ...o });

describe('forcedBlocks', () => {
  it('equals the definition for every small t, forceInit and forceLocal', () => {
    for (const forceInit of [false, true])
      for (let forceLocal = 0; forceLocal <= 6; forceLocal++)
        for (let t = 0; t < 70; t++) {
          const c = nsa({ forceInit, forceLocal, lSel: 8 });
          expect(forcedBlocks(t, c), `t=${t} init=${forceInit} local=${forceLocal}`).toEqual(forcedReference(t, c));
        }
  });

  it('a huge forceLocal gives the blocks up to bt, without a loop per forced block (1e10 would take minutes)', () => {
    expect(forcedBlocks(63, nsa({ forceInit: true, forceLocal: 1e10, lSel: 8 }))).toEqual([0, 7, 6, 5, 4, 3, 2, 1]);
    expect(forcedBlocks(63, nsa({ forceInit: false, forceLocal: 1e308, lSel: 8 }))).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    expect(forcedBlocks(5, nsa({ forceLocal: Number.NaN }))).toEqual([0]);
  });
});

describe('the views get validated configs', () => {
  it('the store keeps the last valid config while the draft is invalid, and takes the next valid one', () => {
    const tiny = uiPreset('tiny');
    const store = createPlaygroundStore({ config: tiny, preset: 'tiny' });
    for (const v of [1e308, 99999999, Number.NaN, 0, -1]) {
      store.getState().setConfig(editConfig(tiny, 'model.seqLen', v));
      expect(store.getState().validConfig, `seqLen ${v}`).toBe(tiny);
    }
    const longer = editConfig(tiny, 'model.seqLen', 128);
    store.getState().setConfig(longer);
    expect(store.getState().validConfig).toBe(longer);
    const m = store.getState().validConfig.model;
    expect(explainDiagram(m.seqLen, m.seqLen - 1, m.nsa!).t).toBe(127);
    // The crash the store now keeps from the view: the draft's T = 1e308 has no query t < T.
    expect(() => explainDiagram(1e308, 1e308 - 1, m.nsa!)).toThrow('outside');
  });

  it('a page opened on an invalid config starts from the preset for its views', () => {
    const bad = editConfig(uiPreset('tiny'), 'model.dk', 15);
    expect(runConfigErrors(bad).length).toBeGreaterThan(0);
    const store = createPlaygroundStore({ config: bad, preset: 'tiny' });
    expect(store.getState().config).toBe(bad);
    expect(runConfigErrors(store.getState().validConfig)).toEqual([]);
  });

  it("an edit's errors at related fields show at the edited field too (l = 4095, within its range, breaks d and lSel)", () => {
    const tiny = uiPreset('tiny');
    const errors = runConfigErrors(editConfig(tiny, 'model.nsa.l', 4095));
    expect(errors.map((e) => e.field).sort()).toEqual(['model.nsa.d', 'model.nsa.lSel']);
    const edit = { path: 'model.nsa.l', before: new Set<string>() };
    expect(editCauses(errors, edit)).toEqual(errors.map((e) => `${e.field}: ${e.message}`));
    const byField = withEditCauses(groupErrors(errors).byField, errors, edit);
    expect(byField.get('model.nsa.l')).toHaveLength(2);
    expect(byField.get('model.nsa.d')).toHaveLength(1); // still at its own field
    // Errors the config had before the edit are not blamed on it.
    const before = new Set(errors.map((e) => `${e.field}\u0000${e.message}`));
    expect(withEditCauses(groupErrors(errors).byField, errors, { path: 'model.nsa.l', before }).has('model.nsa.l')).toBe(false);
  });
});

describe('panel error boundary', () => {
  it('names the fields that differ from the last valid config', () => {
    const tiny = uiPreset('tiny');
    expect(fieldsAtFault(tiny, tiny)).toEqual([]);
    expect(fieldsAtFault(editConfig(tiny, 'model.seqLen', 1e308), tiny)).toEqual(['model.seqLen']);
  });

  it('the note names the panel, the error and the field, and offers to revert only with somewhere to revert to', () => {
    const props = { panel: 'How NSA works', error: new RangeError('query t = 1e+308 outside [0, 1e+308)'), onRetry: () => {} };
    const html = renderToStaticMarkup(createElement(PanelFailure, { ...props, fields: ['model.seqLen'], onRevert: () => {} }));
    expect(html).toContain('data-testid="panel-failure-how-nsa-works"');
    expect(html).toContain('How NSA works could not be drawn');
    expect(html).toContain('RangeError: query t = 1e+308 outside [0, 1e+308)');
    expect(html).toContain('<code>model.seqLen</code>');
    expect(html).toContain('data-testid="panel-failure-revert"');
    const bare = renderToStaticMarkup(createElement(PanelFailure, { ...props, fields: [] }));
    expect(bare).not.toContain('panel-failure-revert');
    expect(bare).not.toContain('panel-failure-fields');
  });

  it('catches a render error and clears it when its reset key changes', () => {
    expect(PanelBoundary.getDerivedStateFromError(new Error('boom'))).toEqual({ error: new Error('boom') });
    expect((PanelBoundary.getDerivedStateFromError('text') as { error: Error }).error.message).toBe('text');
    const failed = { error: new Error('boom'), fields: ['model.seqLen'], resetKey: 1 };
    expect(PanelBoundary.getDerivedStateFromProps({ panel: 'p', children: null, resetKey: 1 }, failed)).toBeNull();
    expect(PanelBoundary.getDerivedStateFromProps({ panel: 'p', children: null, resetKey: 2 }, failed)).toEqual({
      resetKey: 2,
      error: null,
      fields: [],
    });
  });
});

/** A safetensors file by hand: 8-byte little-endian header length, then the header text. */
function safetensors(header: string, data = 0): Uint8Array {
  const h = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + h.length + data);
  new DataView(out.buffer).setUint32(0, h.length, true);
  out.set(h, 8);
  return out;
}

describe('"not a checkpoint" before the decoder', () => {
  it('refuses random bytes, text, a short file, weights without metadata and another format, naming the file', () => {
    let x = 12345;
    const random = Uint8Array.from({ length: 4096 }, () => (x = (x * 1103515245 + 12345) >>> 0) >>> 24);
    const cases: Array<[Uint8Array, string]> = [
      [random, 'not a safetensors file'],
      [new TextEncoder().encode('These are my notes, not weights.\n'), 'not a safetensors file'],
      [new Uint8Array(3), '3 bytes, too short'],
      [safetensors('{"a": 1'), 'its header is not JSON'],
      [safetensors('[1, 2]'), 'not a safetensors file'],
      [safetensors('{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', 4), 'weights only'],
      [safetensors('{"__metadata__": {"format": "pt"}}'), `__metadata__.format is "pt", not '${CHECKPOINT_FORMAT}'`],
    ];
    for (const [bytes, why] of cases) {
      const m = notACheckpoint(bytes, 'f.bin');
      expect(m, why).toMatch(/^f\.bin: not a checkpoint \(/);
      expect(m, why).toContain(why);
      expect(m).not.toContain('header length');
    }
  });

  it('passes a real checkpoint (and a safetensors file of its format) on to the decoder', () => {
    expect(notACheckpoint(safetensors(`{"__metadata__": {"format": "${CHECKPOINT_FORMAT}"}}`), 'f')).toBeNull();
    const config = preset('tiny');
    const params = initParams(paramSpecs(config.model), 3);
    const bytes = encodeCheckpoint({
      config,
      state: { stepsDone: 2, batchesDrawn: 2 },
      params,
      adamM: params,
      adamV: params,
      metrics: [],
      evals: [],
      reason: 'page',
      savedAt: '2026-11-27T00:00:00.000Z',
    });
    expect(notACheckpoint(bytes, 'tiny-step2.safetensors')).toBeNull();
  });
});
