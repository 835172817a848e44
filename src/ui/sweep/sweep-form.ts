// The new-sweep form's text fields read into a learn grid (pure): lists are comma- or
// space-separated, an empty optional field keeps the preset's value; the grid's own checks
// (src/train/learn/grid.ts) name what is wrong, by the form's labels.
import { InvalidConfigError } from '../../definitions/config-issue';
import { gridPoints, type LearnGrid, type LearnPreset, learnPresetConfig, type Mechanism } from '../../train/learn/grid';

export interface SweepForm {
  name: string;
  preset: LearnPreset;
  mechanisms: Mechanism[];
  seeds: string;
  lrs: string;
  steps: string;
  batchSize: string;
  evalEvery: string;
  evalBatches: string;
  /** Key rows per query at T − 1 that the sparse mechanisms are matched to (npm run learn --budget); empty: each sized from the preset. */
  budget: string;
  /** Percent. */
  target: string;
}

export const FORM_LABELS: Record<string, string> = {
  '--preset': 'Task preset',
  '--mechanisms': 'Mechanisms',
  '--seeds': 'Seeds',
  '--lrs': 'Learning rates',
  '--steps': 'Steps',
  '--batch': 'Batch size',
  '--eval-every': 'Evaluate every',
  '--eval-batches': 'Evaluation batches',
  '--target': 'Target accuracy',
  '--budget': 'Key budget',
};

export function defaultSweepForm(preset: LearnPreset, mechanisms: readonly Mechanism[]): SweepForm {
  return {
    name: '',
    preset,
    mechanisms: [...mechanisms],
    seeds: '1',
    lrs: '',
    steps: '',
    batchSize: '',
    evalEvery: '',
    evalBatches: '',
    budget: '',
    target: '99',
  };
}

/** The preset's own values, shown as the optional fields' placeholders. */
export function presetDefaults(preset: LearnPreset): Record<'lrs' | 'steps' | 'batchSize' | 'evalEvery' | 'evalBatches', string> {
  const t = learnPresetConfig(preset).train;
  return {
    lrs: String(t.lrMax),
    steps: String(t.steps),
    batchSize: String(t.batchSize),
    evalEvery: String(t.evalEvery),
    evalBatches: String(t.evalBatches),
  };
}

function list(text: string): number[] | undefined {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  return parts.length ? parts.map(Number) : undefined;
}

function optional(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

export interface FormReading {
  grid: LearnGrid;
  /** Settings the grid holds (0 when it has problems). */
  settings: number;
  /** "Seeds: must be integers …", one per problem; empty when the grid can run. */
  problems: string[];
}

/** The grid the form describes, and its problems (the learn grid's checks, by the form's labels). */
export function readSweepForm(f: SweepForm): FormReading {
  const grid: LearnGrid = {
    preset: f.preset,
    mechanisms: f.mechanisms,
    seeds: list(f.seeds) ?? [],
    lrs: list(f.lrs),
    steps: optional(f.steps),
    batchSize: optional(f.batchSize),
    evalEvery: optional(f.evalEvery),
    evalBatches: optional(f.evalBatches),
    budget: optional(f.budget),
    target: Number(f.target) / 100,
  };
  try {
    return { grid, settings: gridPoints(grid).length, problems: [] };
  } catch (e) {
    if (!(e instanceof InvalidConfigError)) throw e;
    const problems = e.issues.map(
      (i) => `${FORM_LABELS[i.field] ?? i.field}: ${i.message.replace(/an accuracy in \(0, 1\]/, 'a percentage in (0, 100]')}`,
    );
    return { grid, settings: 0, problems };
  }
}
