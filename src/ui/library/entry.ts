// One run of the page's run library: what is listed (LibraryEntry, small), its metrics history
// (RunHistory, for the charts and the comparison) and its latest checkpoint file (bytes, the CLI's
// format), stored apart so the list loads without either. Pure helpers; ./run-storage.ts stores them.
import type { RunConfig } from '../../train/config';
import type { EvalMetrics } from '../../train/types';
import type { RunHistory } from '../../worker/protocol';
import { configSummary } from '../autosave-policy';
import { closestPreset } from '../config/presets';

export interface LibraryEntry {
  /** Stable key (never reused). */
  id: string;
  /** Shown and editable (rename). */
  name: string;
  preset: string;
  /** configSummary(config, preset). */
  summary: string;
  config: RunConfig;
  stepsDone: number;
  bestValLoss: number | null;
  /** The last step's training loss. */
  lastLoss: number | null;
  /** ISO times: the run's first save (or import), and its latest. */
  createdAt: string;
  savedAt: string;
  /** Size of the stored checkpoint file. */
  checkpointBytes: number;
  /** 'page': trained in this browser; 'import': an uploaded checkpoint file (its name). */
  origin: 'page' | 'import';
  /** The researcher's notes on the run (absent: none). */
  notes?: string;
  /** Its tags, e.g. ['baseline', 'lr-sweep'] (absent: none). */
  tags?: string[];
}

/** Tags typed as text: split at commas, trimmed, empty ones and repeats dropped, each at most 40 characters. */
export function parseTags(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const t = raw.trim().slice(0, 40);
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

export type { RunHistory };

/** Everything stored for one run (a deleted run is kept in memory as this, for Undo). */
export interface LibraryRecord {
  entry: LibraryEntry;
  history: RunHistory;
  checkpoint: Uint8Array;
}

let counter = 0;

/** A new run id: time plus a random part (ids from two tabs must not collide). */
export function newRunId(now: Date = new Date()): string {
  const random = Math.floor(Math.random() * 36 ** 6)
    .toString(36)
    .padStart(6, '0');
  return `run-${now.getTime().toString(36)}-${(counter++).toString(36)}${random}`;
}

export function bestValLoss(evals: readonly EvalMetrics[]): number | null {
  let best: number | null = null;
  for (const e of evals) if (Number.isFinite(e.valLoss) && (best === null || e.valLoss < best)) best = e.valLoss;
  return best;
}

/** "tiny dense 14:03:07": the preset, the attention and the time the run was first saved. */
export function defaultRunName(config: RunConfig, now: Date = new Date()): string {
  const hms = [now.getHours(), now.getMinutes(), now.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return `${closestPreset(config)} ${config.model.attention === 'nsa' ? 'NSA' : 'dense'} ${hms}`;
}

/** The checkpoint's download name, as the page's other checkpoint download: `<preset>-step<N>.safetensors`. */
export function checkpointFileName(e: Pick<LibraryEntry, 'preset' | 'stepsDone'>): string {
  return `${e.preset}-step${e.stepsDone}.safetensors`;
}

/**
 * The entry for a run saved now. `previous` is the stored entry of the same id: its name, notes,
 * tags, creation time and origin stay (a rename survives later autosaves).
 */
export function entryFor(
  o: { id: string; config: RunConfig; history: RunHistory; stepsDone: number; checkpointBytes: number; savedAt: string; name?: string },
  previous: LibraryEntry | null,
  origin: LibraryEntry['origin'] = 'page',
): LibraryEntry {
  const preset = closestPreset(o.config);
  return {
    id: o.id,
    name: previous?.name ?? o.name ?? defaultRunName(o.config, new Date(o.savedAt)),
    preset,
    summary: configSummary(o.config, preset),
    config: o.config,
    stepsDone: o.stepsDone,
    bestValLoss: bestValLoss(o.history.evals),
    lastLoss: o.history.metrics.at(-1)?.loss ?? null,
    createdAt: previous?.createdAt ?? o.savedAt,
    savedAt: o.savedAt,
    checkpointBytes: o.checkpointBytes,
    origin: previous?.origin ?? origin,
    // Notes and tags survive later autosaves, as a rename does.
    ...(previous?.notes !== undefined ? { notes: previous.notes } : {}),
    ...(previous?.tags !== undefined ? { tags: previous.tags } : {}),
  };
}

/** Newest first (by the latest save). */
export function byNewest(a: LibraryEntry, b: LibraryEntry): number {
  return b.savedAt.localeCompare(a.savedAt) || b.id.localeCompare(a.id);
}
