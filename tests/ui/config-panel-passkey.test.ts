// The config panel with the passkey data source: the source selector offers it, the task's fields
// are shown (only) with it, and an invalid task field carries its message next to the input.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { RunConfig } from '../../src/train/config';
import { ConfigPanel } from '../../src/ui/config/ConfigPanel';
import { editConfig } from '../../src/ui/config/edit';
import { errorDomId, fieldDomId, PASSKEY_FIELDS } from '../../src/ui/config/fields';
import { uiPreset } from '../../src/ui/config/presets';

const render = (value: RunConfig) => renderToStaticMarkup(createElement(ConfigPanel, { value, onChange: () => {} }));

describe('config panel: passkey data source', () => {
  it('offers passkey as a source and shows the task fields only for it', () => {
    const tiny = render(uiPreset('tiny'));
    expect(tiny).toContain('<option value="passkey">passkey retrieval (needle in a haystack)</option>');
    expect(tiny).not.toContain('data-testid="passkey-task-fields"');
    expect(render(uiPreset('recall'))).not.toContain('data-testid="passkey-task-fields"');
    const html = render(uiPreset('passkey'));
    expect(html).toContain('data-testid="passkey-task-fields"');
    expect(html).not.toContain('data-testid="recall-task-fields"');
    for (const f of PASSKEY_FIELDS) expect(html, f.path).toContain(`id="${fieldDomId(f.path)}"`);
    expect(html).toMatch(/id="cfg-data-passkey-keyLength"[^>]*value="4"/);
    expect(html).toMatch(/id="cfg-data-passkey-maxDepth"[^>]*value="0.8"/);
    expect(html).toContain('Passkey retrieval: a needle');
    expect(html).not.toContain('cfg-error');
  });

  it('an invalid task field shows its message at that input', () => {
    const c = editConfig(uiPreset('passkey'), 'data.passkey.minDepth', 0.9);
    const html = render(c);
    const id = errorDomId('data.passkey.minDepth');
    expect(html).toMatch(new RegExp(`id="${fieldDomId('data.passkey.minDepth')}"[^>]*aria-invalid="true"[^>]*aria-describedby="${id}`));
    expect(html).toContain(
      `<span id="${id}" class="cfg-error" data-testid="config-error-data.passkey.minDepth">must not exceed maxDepth (0.9 &gt; 0.8)</span>`,
    );
  });
});
