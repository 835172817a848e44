// The run's record for comparing runs across machines and commits: adapter, tokens/s, losses,
// timings and main-thread responsiveness, written to test-results/nsa-e2e-run.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import type { Responsiveness } from './responsiveness';

export interface RunArtifact {
  date: string;
  gpuMode: string;
  profile: string;
  configHash: string;
  adapter?: { name: string; vendor: string; architecture: string; kind: string };
  steps?: number;
  losses?: Array<{ step: number; loss: number }>;
  valLosses?: Array<{ step: number; valLoss: number }>;
  tokensPerSecond?: { last: number; mean: number };
  timings?: { initSeconds: number; trainSeconds: number; pausedAt: number };
  /** key: profile@vendor/architecture in e2e/golden.json; expected null: none recorded for it. */
  golden?: { key: string; step: number; loss: number; expected: number | null; tolerance: number | null; recorded: boolean };
  responsiveness?: Responsiveness;
  generation?: { prompt: string; text: string; tokens: number };
  stall?: { bannerAfterSeconds: number; phase: string };
  /** Long-run spec: redraws per chart during the run, their main-thread ms, the points drawn at the end. */
  charts?: {
    redraws: Record<string, number>;
    redrawMs: Record<string, { p50: number; max: number }>;
    drawn: Record<string, { points: number; budget: number }>;
  };
}

export function writeArtifact(path: string, a: RunArtifact): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(a, null, 2) + '\n');
}
