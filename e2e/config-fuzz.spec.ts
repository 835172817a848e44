// The page's config fuzz (issue 24, item 1): every numeric config field (the tiny preset's, then the
// task fields the recall and passkey presets add) × {0, −1, 1e308, NaN,
// 99999999, 'abc'}, typed in turn without starting a run. After each value: no page error (the
// suite's console guard in e2e/test.ts fails on any console error or uncaught exception), no panel
// replaced by its error boundary, the page still interactive (Run present), and the value either
// refused at the field (aria-invalid with a message next to it) or accepted (no message there).
// The field gets its original text back before the next one. tests/ui/config-fuzz-panel.test.ts is
// the same fuzz in process (all fields of each preset).
import { expandConfig, expectAdapter } from './page-helpers';
import { expect, type Page, test } from './test';

const VALUES = ['0', '-1', '1e308', 'NaN', '99999999', 'abc'];

interface Check {
  value: string;
  run: boolean;
  invalid: string | null;
  message: string | null;
  failures: string[];
}

/**
 * Types each value into the field in turn, then its original text, in the page (one round trip per
 * field: the checks are batched): each value is set as the input's text with the input event a
 * keystroke sends (React's onChange), and after the next frame the Run button, the field's state and
 * message and any panel replaced by its error boundary are read.
 */
function typeEach(page: Page, path: string, values: readonly string[]): Promise<{ checks: Check[]; restored: Check }> {
  return page.evaluate(
    async ({ p, vs }) => {
      const q = (id: string) => document.querySelector(`[data-testid="${CSS.escape(id)}"]`);
      const input = q(`config-field-${p}`) as HTMLInputElement;
      const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
      const type = async (value: string): Promise<Check> => {
        input.focus();
        setValue.call(input, value);
        input.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((r) => requestAnimationFrame(() => r(null)));
        const field = q(`config-field-${p}`);
        return {
          value,
          run: q('run-button') !== null,
          invalid: field?.getAttribute('aria-invalid') ?? null,
          message: q(`config-error-${p}`)?.textContent ?? null,
          failures: [...document.querySelectorAll('[data-testid^="panel-failure-"]')].map((e) => e.textContent ?? ''),
        };
      };
      const original = input.value;
      const checks: Check[] = [];
      for (const v of vs) checks.push(await type(v));
      return { checks, restored: await type(original) };
    },
    { p: path, vs: values },
  );
}

/** The numeric text inputs of the config panel (by path), optionally only those under `prefix`. */
async function numericFields(page: Page, prefix = ''): Promise<string[]> {
  const paths = await page
    .locator('input[data-testid^="config-field-"]')
    .evaluateAll((els) =>
      els
        .filter((e) => e instanceof HTMLInputElement && e.type === 'text' && (e.inputMode === 'numeric' || e.inputMode === 'decimal'))
        .map((e) => (e as HTMLElement).dataset.testid!.slice('config-field-'.length)),
    );
  return paths.filter((p) => p.startsWith(prefix));
}

test('every numeric config field × 0, -1, 1e308, NaN, 99999999, text leaves the page working', async ({ page }, testInfo) => {
  await page.goto('./#v=1&preset=tiny');
  await expectAdapter(page);
  await expandConfig(page);
  const started = Date.now();
  const counts: string[] = [];
  // tiny: the model, NSA, training and data fields; recall and passkey add their task's fields.
  for (const [preset, prefix] of [
    ['tiny', ''],
    ['recall', 'data.recall.'],
    ['passkey', 'data.passkey.'],
  ] as const) {
    if (preset !== 'tiny') await page.getByTestId('preset-select').selectOption(preset);
    const paths = await numericFields(page, prefix);
    expect(paths.length, preset).toBeGreaterThan(preset === 'tiny' ? 10 : 3);
    let refused = 0;
    for (const path of paths) {
      const { checks, restored } = await typeEach(page, path, VALUES);
      for (const c of checks) {
        const what = `${preset}: ${path} = ${c.value}`;
        expect(c.failures, what).toEqual([]);
        expect(c.run, `${what}: Run button`).toBe(true);
        if (c.invalid === 'true') {
          expect(c.message?.trim(), `${what}: refused without a message`).toBeTruthy();
          refused++;
        } else {
          expect(c.invalid, what).toBe('false');
          expect(c.message, `${what}: accepted but a message is shown`).toBeNull();
        }
      }
      expect(restored.invalid, `${preset}: ${path} back to ${restored.value}`).toBe('false');
    }
    await expect(page.getByTestId('config-errors')).toHaveCount(0);
    await expect(page.getByTestId('run-button')).toBeEnabled();
    const n = paths.length * VALUES.length;
    counts.push(`${preset}: ${paths.length} fields × ${VALUES.length} = ${n} (refused ${refused}, accepted ${n - refused})`);
  }
  // Still interactive: a click on Step would start a run; the config still edits and validates.
  await page.getByTestId('config-field-model.dk').fill('15');
  await expect(page.getByTestId('config-error-model.dk')).toContainText('even');
  await page.getByTestId('config-field-model.dk').fill('16');
  await expect(page.getByTestId('config-error-model.dk')).toHaveCount(0);
  testInfo.annotations.push({
    type: 'config fuzz',
    description: `${counts.join('; ')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  });
});
