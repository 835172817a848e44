// The page's config fuzz in process (e2e/config-fuzz.spec.ts types the same values in the browser):
// every numeric field of the presets whose panels show different fields (tiny, recall, passkey)
// × {0, −1, 1e308, NaN, 99999999, 'abc' (NaN)}. The config panel renders the draft, the views get
// the store's last valid config (which never takes an invalid draft), and the value is either
// refused at its field with a message (its own, or the errors it caused at related fields, which the
// panel also shows at the edited field) or accepted. The recall and passkey presets fuzz the fields
// tiny's panel does not show (their task fields); the browser spec types every field of each.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import { ConfigPanel } from '../../src/ui/config/ConfigPanel';
import { editConfig } from '../../src/ui/config/edit';
import { editCauses } from '../../src/ui/config/errors';
import { ALL_FIELDS, errorDomId, sectionApplies, type SectionId, SECTIONS } from '../../src/ui/config/fields';
import { parseNumberText } from '../../src/ui/config/number-text';
import { runConfigErrors } from '../../src/ui/config/parse';
import { uiPreset, type UiPresetName } from '../../src/ui/config/presets';
import { ExplainPanel } from '../../src/ui/explain/ExplainPanel';
import { createPlaygroundStore } from '../../src/ui/store';

export const FUZZ_TEXTS = ['0', '-1', '1e308', 'NaN', '99999999', 'abc'] as const;
const PRESETS: UiPresetName[] = ['tiny', 'recall', 'passkey'];

function numericFields(preset: UiPresetName): string[] {
  const c = uiPreset(preset);
  const shown = (id: SectionId) => id === 'data' || sectionApplies(id, c);
  const data = (p: string) => !p.startsWith('data.') || p.split('.').length === 2 || p.startsWith(`data.${c.data.source}.`);
  return SECTIONS.filter((s) => shown(s.id))
    .flatMap((s) => s.fields)
    .filter((f) => (f.kind.type === 'int' || f.kind.type === 'number') && data(f.path))
    .map((f) => f.path);
}

describe('config fuzz: every numeric field × 0, −1, 1e308, NaN, 99999999, text', () => {
  for (const preset of PRESETS) {
    it(`${preset}: the panel renders each value, views keep a valid config, each value refused at its field or accepted`, () => {
      const tiny = new Set(numericFields('tiny'));
      const fields = preset === 'tiny' ? numericFields(preset) : numericFields(preset).filter((f) => !tiny.has(f));
      expect(fields.length).toBeGreaterThan(preset === 'tiny' ? 10 : 1);
      const store = createPlaygroundStore({ config: uiPreset(preset), preset });
      const base = uiPreset(preset);
      for (const path of fields) {
        expect(ALL_FIELDS.some((f) => f.path === path)).toBe(true);
        for (const text of FUZZ_TEXTS) {
          const draft = editConfig(base, path, parseNumberText(text));
          store.getState().setConfig(draft);
          const errors = runConfigErrors(draft);
          const html = renderToStaticMarkup(createElement(ConfigPanel, { value: draft, onChange: () => {} }));
          // Refused at the field: its own message, or (shown there by the panel after the edit) the errors it caused elsewhere.
          const own = errors.some((e) => e.field === path);
          if (own) expect(html, `${path} = ${text}`).toContain(`id="${errorDomId(path)}"`);
          const caused = editCauses(errors, { path, before: new Set() });
          expect(own || caused.length > 0, `${path} = ${text}: ${JSON.stringify(errors)}`).toBe(errors.length > 0);
          const valid = store.getState().validConfig;
          expect(runConfigErrors(valid), `${path} = ${text}`).toEqual([]);
          expect(valid === draft).toBe(errors.length === 0);
          const m = valid.model;
          renderToStaticMarkup(createElement(ExplainPanel, { nsa: m.nsa, T: m.seqLen, dense: m.attention === 'dense' }));
        }
        store.getState().setConfig(base);
      }
    });
  }
});
