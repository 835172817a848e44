// The golden loss: the loss at a fixed step of the e2e profile's run (fixed seed, deterministic
// kernels) stored in e2e/golden.json. NSA_E2E_RECORD_GOLDEN=1 rewrites the profile's entry from
// this run instead of comparing.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
 * Same bits on the same SwiftShader build; other CPUs (vector widths in the JIT) or GPU drivers
 * round float32 differently, and ten AdamW steps amplify that a little. Measured noise is far
 * below these; a real regression (wrong gradient, data order, init) moves the loss by ≥ 0.01.
 */
export const DEFAULT_TOLERANCE = { swiftshader: 2e-3, system: 5e-3 } as const;

function readAll(): Record<string, GoldenEntry> {
  return JSON.parse(readFileSync(PATH, 'utf8')) as Record<string, GoldenEntry>;
}

export function goldenFor(profile: string): GoldenEntry | null {
  return readAll()[profile] ?? null;
}

export function recordGolden(profile: string, entry: GoldenEntry): void {
  const all = readAll();
  all[profile] = entry;
  writeFileSync(PATH, JSON.stringify(all, null, 2) + '\n');
}
