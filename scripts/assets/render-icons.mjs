// Renders public/icon-192.png, public/icon-512.png and public/social-preview.png (1200 × 630)
// from public/icon.svg with the test suite's Chromium (e2e/gpu-mode.ts's path). Run once after
// editing the icon: `node scripts/assets/render-icons.mjs`; the PNGs are committed.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { chromium } from '@playwright/test';

const root = fileURLToPath(new URL('../../', import.meta.url));
const svg = readFileSync(`${root}public/icon.svg`, 'utf8');
const executablePath = process.env.NSA_CHROMIUM ?? '/usr/bin/chromium';

const preview = `<!doctype html><html><body style="margin:0;width:1200px;height:630px;display:flex;align-items:center;gap:56px;
  padding:0 80px;box-sizing:border-box;background:linear-gradient(135deg,#0b1f44,#2f6fde);color:#fff;font-family:system-ui,sans-serif">
  <div style="width:300px;height:300px;flex:none">${svg.replace('<svg ', '<svg width="300" height="300" ')}</div>
  <div><div style="font-size:72px;font-weight:700;line-height:1.1">NSA Playground</div>
  <div style="font-size:34px;margin-top:24px;opacity:.92;line-height:1.3">Train Native Sparse Attention models on your own GPU
  in the browser, and see which key blocks each query selects.</div></div></body></html>`;

const browser = await chromium.launch({ executablePath });
try {
  for (const size of [192, 512]) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    await page.setContent(`<body style="margin:0">${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body>`);
    await page.screenshot({ path: `${root}public/icon-${size}.png`, omitBackground: true });
    await page.close();
  }
  const page = await browser.newPage({ viewport: { width: 1200, height: 630 } });
  await page.setContent(preview);
  await page.screenshot({ path: `${root}public/social-preview.png` });
} finally {
  await browser.close();
}
