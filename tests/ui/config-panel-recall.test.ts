// The config panel with the recall data source: the source selector offers it, the task's fields
// are shown (only) with it, and an invalid task field carries its message next to the input.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { RunConfig } from '../../src/train/config';
import { ConfigPanel } from '../../src/ui/config/ConfigPanel';
import { editConfig } from '../../src/ui/config/edit';
import { errorDomId, fieldDomId, RECALL_FIELDS } from '../../src/ui/config/fields';
import { uiPreset } from '../../src/ui/config/presets';

const render = (value: RunConfig) => renderToStaticMarkup(createElement(ConfigPanel, { value, onChange: () => {} }));

describe('config panel: recall data source', () => {
  it('offers recall as a source and shows the task fields only for it', () => {
    const tiny = render(uiPreset('tiny'));
    expect(tiny).toContain('<option value="recall">associative recall task</option>');
    expect(tiny).not.toContain('data-testid="recall-task-fields"');
    const html = render(uiPreset('recall'));
    expect(html).toContain('data-testid="recall-task-fields"');
    for (const f of RECALL_FIELDS) expect(html, f.path).toContain(`id="${fieldDomId(f.path)}"`);
    expect(html).toMatch(/id="cfg-data-recall-pairs"[^>]*value="10"/);
    expect(html).not.toContain('cfg-error');
  });

  it('an invalid task field shows its message at that input', () => {
    const c = editConfig(uiPreset('recall'), 'data.recall.queries', 11);
    const html = render(c);
    const id = errorDomId('data.recall.queries');
    expect(html).toMatch(new RegExp(`id="${fieldDomId('data.recall.queries')}"[^>]*aria-invalid="true"[^>]*aria-describedby="${id}`));
    expect(html).toContain(
      `<span id="${id}" class="cfg-error" data-testid="config-error-data.recall.queries">must not exceed pairs (11 &gt; 10)</span>`,
    );
  });
});
