// End-to-end tests of the real page in headless Chromium with WebGPU (SwiftShader by default;
// NSA_E2E_GPU=system for the machine's GPU, see e2e/gpu-mode.ts).
//
// By default the suite tests the static build: `vite build`, then `vite preview` serving it from a
// sub-path (/nsa/), which checks the relative base and the worker/data URLs. NSA_E2E_PREBUILT=1
// serves the dist/ already built (npm test builds it beside the static checks). NSA_E2E_SERVER=dev
// uses the dev server instead (faster edit-test loop).
import { defineConfig } from '@playwright/test';

import { CHROMIUM_PATH, LAUNCH_ARGS } from './e2e/gpu-mode';

const PORT = 4173;
const server = process.env.NSA_E2E_SERVER ?? 'preview';
if (server !== 'preview' && server !== 'dev') throw new Error(`NSA_E2E_SERVER must be 'preview' or 'dev' (got '${server}')`);
const basePath = server === 'preview' ? '/nsa/' : '/';
const prepare = 'node scripts/prepare-data.mjs'; // idempotent: public/data/brown.txt
const build = process.env.NSA_E2E_PREBUILT === '1' ? '' : 'npx vite build --logLevel warn && ';
const command =
  server === 'preview'
    ? `${prepare} && ${build}npx vite preview --port ${PORT} --strictPort --base ${basePath}`
    : `${prepare} && npx vite --port ${PORT} --strictPort`;
const isCI = !!process.env.CI;

export default defineConfig({
  testDir: 'e2e',
  outputDir: 'test-results',
  // Two workers, one spec file each at a time: much of a test is a page starting up and compiling
  // its pipelines (single-threaded per page on SwiftShader), so two side by side take about half the
  // time of one after the other on two cores (7.8 → 4.2 min measured here). Timing figures are
  // reports, not assertions, so sharing the cores cannot fail a test. Generous limits, no hidden retries.
  workers: 2,
  fullyParallel: false,
  retries: 0,
  forbidOnly: isCI,
  timeout: 600_000,
  expect: { timeout: 60_000 },
  reporter: 'list',
  use: {
    baseURL: `http://localhost:${PORT}${basePath}`,
    browserName: 'chromium',
    launchOptions: { executablePath: CHROMIUM_PATH, args: LAUNCH_ARGS },
    // Locally a screenshot of every test and a trace of every failure under test-results/. CI
    // returns only the console, so there it records neither a trace (DOM snapshots at every
    // action, CPU the rest of npm test shares) nor a screenshot of a passing test.
    screenshot: isCI ? 'only-on-failure' : 'on',
    trace: isCI ? 'off' : 'retain-on-failure',
    actionTimeout: 30_000,
    navigationTimeout: 60_000,
  },
  webServer: {
    command,
    url: `http://localhost:${PORT}${basePath}`,
    reuseExistingServer: !isCI,
    timeout: 300_000,
    stdout: 'pipe',
    stderr: 'pipe',
  },
});
