// The sweep's accuracy figure and table as files (pure): the figure is `npm run learn`'s
// (src/train/learn/figure.ts: held-out answer accuracy against step, one line per setting coloured
// by mechanism, chance dashed, a sparse mechanism's needle selected dotted), drawn from the settings'
// evaluations; the table as CSV.
import { taskChance } from '../../train/eval/task-chance';
import { learnFigureSvg } from '../../train/learn/figure';
import type { RunHistory } from '../../worker/protocol';
import { settingLabel, type Sweep } from './sweep-plan';
import type { SettingResult } from './sweep-results';

/** The figure's SVG text; null before any setting has an evaluation with an accuracy. */
export function sweepFigureSvg(s: Sweep, history: (libraryId: string) => RunHistory | null): string | null {
  const curves = s.settings.flatMap((x) => {
    const h = x.libraryId ? history(x.libraryId) : null;
    const points = (h?.evals ?? []).flatMap((e) => (e.accuracy === undefined ? [] : [{ step: e.step, accuracy: e.accuracy }]));
    // A sparse mechanism's needle selected, dotted (the page's evaluations record it: needle-read.ts).
    const needle = (h?.evals ?? []).flatMap((e) => (e.needleSelected === undefined ? [] : [{ step: e.step, share: e.needleSelected }]));
    return points.length ? [{ label: settingLabel(s, x), mechanism: x.mechanism, points, needle }] : [];
  });
  if (!curves.length) return null;
  const first = s.settings[0].config;
  return learnFigureSvg({
    title: `${s.name}: held-out answer accuracy (${s.grid.preset}, this GPU)`,
    curves,
    chance: taskChance(first) ?? 0,
    steps: Math.max(...s.settings.map((x) => x.config.train.steps)),
  });
}

/** The results table as CSV (one row per setting, in grid order; empty cells where nothing is known yet). */
export function sweepCsv(s: Sweep, rows: readonly SettingResult[]): string {
  const cell = (v: number | null) => (v === null ? '' : String(v));
  const lines = ['mechanism,seed,lr,state,best_accuracy,best_val_loss,steps,steps_planned,reached_at,seconds,library_id'];
  for (const r of [...rows].sort((a, b) => a.index - b.index))
    lines.push(
      [
        r.setting.mechanism,
        r.setting.seed,
        r.setting.lr,
        r.setting.state,
        cell(r.bestAccuracy),
        cell(r.bestValLoss),
        r.steps,
        r.setting.config.train.steps,
        cell(r.reachedAt),
        r.seconds,
        r.setting.libraryId ?? '',
      ].join(','),
    );
  return `${lines.join('\n')}\n`;
}
