// Page state (issue 10 part 6): nothing red before the user acts, text that is not a number never
// reaches the URL, a link with one bad key keeps the valid ones and names the bad one (the address
// bar keeps the link until an edit), and a link pasted into a tab holding a run asks first: the
// held run's config stays in the panel (and Export JSON) unless the user opens the link as a new
// run draft.
import { expandConfig, expectAdapter, waitForStatus } from './page-helpers';
import { expect, type Page, test } from './test';

const hashOf = (page: Page) => page.evaluate(() => decodeURIComponent(location.hash));

test('no error before the user acts; "abc" in a number field stays out of the URL; a bad key is named and the rest kept', async ({
  page,
}) => {
  await page.goto('./#v=1&preset=tiny&train.steps=7&model.depth=3');
  await expectAdapter(page);
  const notice = page.getByTestId('config-notice');
  await expect(notice).toContainText('model.depth: is not a known setting');
  await expect(notice).toContainText("The link's other setting was applied.");
  await expect(page.getByTestId('config-field-train.steps')).toHaveValue('7');
  expect(await hashOf(page)).toContain('model.depth=3'); // the link stays as pasted until an edit

  // Nothing red on a page nobody has touched (the config is valid; generation has no model yet).
  await expect(page.getByTestId('config-errors')).toHaveCount(0);
  await expect(page.locator('[data-testid^="gen-"][data-testid$="-error"]')).toHaveCount(0);
  await expect(page.locator('.error-text:visible, [role="alert"]:visible')).toHaveCount(0);

  await expandConfig(page);
  const steps = page.getByTestId('config-field-train.steps');
  await steps.fill('12');
  await expect.poll(() => hashOf(page)).toContain('train.steps=12');
  expect(await hashOf(page)).not.toContain('model.depth');
  await steps.fill('abc');
  await expect(page.getByTestId('config-errors')).toBeVisible(); // the field says what is wrong…
  await page.waitForTimeout(200);
  const hash = await hashOf(page);
  expect(hash).toContain('train.steps=12'); // …and the URL keeps the last number
  expect(hash).not.toMatch(/NaN|abc/);
});

test('a new link pasted into a tab holding a run asks first; declining keeps the held config in the panel and the URL', async ({
  page,
}) => {
  await page.goto('./#v=1&preset=tiny&train.steps=5');
  await expectAdapter(page);
  await page.getByTestId('step-button').click();
  await waitForStatus(page, /paused/);
  const dim = page.getByTestId('config-field-model.dim');
  await expect(dim).toHaveValue('64');

  let question = '';
  page.once('dialog', (d) => {
    question = d.message();
    void d.dismiss();
  });
  await page.evaluate(() => (location.hash = '#v=1&preset=small'));
  await expect.poll(() => question).toContain("Open the link's configuration as a new run draft?");
  await expect.poll(() => hashOf(page)).toContain('preset=tiny');
  await expect(dim).toHaveValue('64');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'paused');

  page.once('dialog', (d) => void d.accept());
  await page.evaluate(() => (location.hash = '#v=1&preset=small'));
  await waitForStatus(page, /idle/);
  await expect(dim).toHaveValue('256');
  await expect(page.getByTestId('config-field-model.dim')).toBeEnabled();
});
