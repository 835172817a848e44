// A sweep: the `npm run learn` grid (src/train/learn/grid.ts: a task preset × mechanisms × seeds ×
// learning rates, early stop at a target accuracy) run on the page's GPU one setting after another,
// each setting a run of the run library tagged with the sweep. This file holds the plan and its
// progress as plain data (persisted by ./sweep-storage.ts, so a sweep resumes after a reload); pure.
import type { RunConfig } from '../../train/config';
import { gridPoints, type LearnGrid, type Mechanism } from '../../train/learn/grid';

/** Tags of sweep runs start with this; the rest is the sweep's name. */
export const SWEEP_TAG_PREFIX = 'sweep:';

/** pending: not started; started: has a library run that did not finish (stopped, or the page closed); finished: trained to its steps or its target. */
export type SettingState = 'pending' | 'started' | 'finished';

export interface SweepSetting {
  mechanism: Mechanism;
  seed: number;
  lr: number;
  /** The run config (kept: a resumed sweep trains what it planned, whatever the presets became). */
  config: RunConfig;
  /** The run library entry of its run, once started. */
  libraryId: string | null;
  state: SettingState;
}

export interface Sweep {
  version: 1;
  id: string;
  /** Shown, and the runs' tag (`sweep:<name>`). */
  name: string;
  createdAt: string;
  grid: LearnGrid;
  settings: SweepSetting[];
}

/** The sweep's tag on its runs. */
export function sweepTag(name: string): string {
  return `${SWEEP_TAG_PREFIX}${name}`;
}

/** A typed name made fit for a tag: no commas (tags are typed comma-separated), at most 34 characters (a tag holds 40). */
export function sweepName(text: string): string {
  return text.replace(/,/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 34).trim();
}

/** "mqar-tiny 14:03": the preset and the local time the sweep was planned. */
export function defaultSweepName(preset: string, now: Date = new Date()): string {
  const hm = [now.getHours(), now.getMinutes()].map((n) => String(n).padStart(2, '0')).join(':');
  return `${preset} ${hm}`;
}

/**
 * The sweep of `grid` (every setting pending); throws InvalidConfigError naming each bad field
 * (the learn grid's checks, `--seeds` style names) before anything runs.
 */
export function planSweep(grid: LearnGrid, name: string, id: string, now: Date = new Date()): Sweep {
  const settings = gridPoints(grid).map((p): SweepSetting => ({
    mechanism: p.mechanism,
    seed: p.seed,
    lr: p.lr,
    config: p.config,
    libraryId: null,
    state: 'pending',
  }));
  return { version: 1, id, name: sweepName(name) || defaultSweepName(grid.preset, now), createdAt: now.toISOString(), grid, settings };
}

/** The index of the next setting to train (a started one first: it continues), or -1 when all finished. */
export function nextSetting(s: Sweep): number {
  const started = s.settings.findIndex((x) => x.state === 'started');
  return started >= 0 ? started : s.settings.findIndex((x) => x.state === 'pending');
}

/** `s` with setting `i` changed (a new object: the store and storage see a new sweep). */
export function withSetting(s: Sweep, i: number, patch: Partial<Pick<SweepSetting, 'libraryId' | 'state'>>): Sweep {
  return { ...s, settings: s.settings.map((x, j) => (j === i ? { ...x, ...patch } : x)) };
}

/** "nsa · seed 1 · lr 0.003": what tells this setting apart (the seed and lr only when the grid has several). */
export function settingLabel(s: Sweep, x: Pick<SweepSetting, 'mechanism' | 'seed' | 'lr'>): string {
  const several = (f: (y: SweepSetting) => number) => new Set(s.settings.map(f)).size > 1;
  return [x.mechanism, several((y) => y.seed) ? `seed ${x.seed}` : '', several((y) => y.lr) ? `lr ${x.lr}` : '']
    .filter(Boolean)
    .join(' · ');
}

/** The library name of a setting's run: "<sweep> · nsa · seed 1". */
export function settingRunName(s: Sweep, x: SweepSetting): string {
  return `${s.name} · ${settingLabel(s, x)}`;
}

/** The notes written on a setting's run. */
export function settingNotes(s: Sweep, x: SweepSetting): string {
  return `Sweep ${s.name} (${s.grid.preset}, target ${+(100 * s.grid.target).toFixed(2)}%): ${x.mechanism}, seed ${x.seed}, lr ${x.lr}.`;
}
