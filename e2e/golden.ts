// The golden loss: the loss at a fixed step of the e2e profile's run (fixed seed, deterministic
// kernels) stored in e2e/golden.json, one entry per profile and adapter. The adapter is part of
// the key because the value depends on it: kernels pick tilings and variants per adapter, and GPU
// vendors round float32 differently, so a golden recorded on one adapter guards only that one.
// A run on an adapter with no golden fails (it must never pass unchecked) after writing its loss
// to the run artifact; NSA_E2E_RECORD_GOLDEN=1 records this run's value instead of comparing.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { GpuMode } from './gpu-mode';

export interface GoldenEntry {
  /** The config's URL hash. */
  hash: string;
  step: number;
  loss: number;
  /** Largest allowed |loss − golden|. */
  tolerance: number;
  why: string;
  recorded: string;
}

const PATH = fileURLToPath(new URL('./golden.json', import.meta.url));

export const RECORD_GOLDEN = process.env.NSA_E2E_RECORD_GOLDEN === '1';

/**
 * Same bits on the same adapter and driver (no float atomics); another CPU under SwiftShader
 * (vector widths in the JIT) or another driver of the same GPU architecture rounds float32 a
 * little differently, and the steps amplify that a little (more steps on a GPU: the small preset
 * runs 300). A real regression (wrong gradient, data order, init) moves the loss by ≥ 0.01.
 */
export const DEFAULT_TOLERANCE: Record<GpuMode, number> = { swiftshader: 2e-3, system: 5e-3 };

const WHY = 'float32 rounding differs across CPUs (SwiftShader JIT) and GPU drivers; a real regression moves the loss by >= 0.01';

/** `profile@vendor/architecture`, lower case, e.g. `system/small-nsa-300@nvidia/hopper` (shared with npm run train:golden). */
export { type GoldenAdapter, goldenKey } from '../src/util/golden-key';

function readAll(): Record<string, GoldenEntry> {
  return JSON.parse(readFileSync(PATH, 'utf8')) as Record<string, GoldenEntry>;
}

export function goldenFor(key: string): GoldenEntry | null {
  return readAll()[key] ?? null;
}

/** Writes (or replaces) the entry, keeping the tolerance and reason of the one it replaces. */
export function recordGolden(
  key: string,
  mode: GpuMode,
  run: { hash: string; step: number; loss: number; adapterName: string },
): GoldenEntry {
  const all = readAll();
  const old = all[key];
  const entry: GoldenEntry = {
    hash: run.hash,
    step: run.step,
    loss: run.loss,
    tolerance: old?.tolerance ?? DEFAULT_TOLERANCE[mode],
    why: old?.why ?? WHY,
    recorded: `${new Date().toISOString()} on ${run.adapterName}`,
  };
  all[key] = entry;
  writeFileSync(PATH, JSON.stringify(all, null, 2) + '\n');
  return entry;
}

/** The command that records the golden of this mode (run on the adapter it is for). */
export function recordCommand(mode: GpuMode): string {
  return `NSA_E2E_RECORD_GOLDEN=1${mode === 'swiftshader' ? '' : ` NSA_E2E_GPU=${mode}`} npx playwright test e2e/playground.spec.ts`;
}

/** Why the run cannot be checked, with this run's value and how to record it. */
export function missingGoldenMessage(key: string, mode: GpuMode, run: { step: number; loss: number }, artifactPath: string): string {
  const known = Object.keys(readAll());
  return [
    `No golden loss for '${key}' in e2e/golden.json, so this run's loss cannot be checked (known: ${known.join(', ') || 'none'}).`,
    `This run: loss ${run.loss} at step ${run.step} (also in ${artifactPath}).`,
    `If this commit is known to train correctly (the default SwiftShader suite passes on it), record the value on this machine and commit e2e/golden.json:`,
    `  ${recordCommand(mode)}`,
  ].join('\n');
}
