// The learning grid (src/train/learn/grid.ts) and its figure: every bad flag or field refused before
// training, naming it; one run config per (mechanism, seed, lr) with the mechanism's attention; the
// MQAR presets valid with their answers out of the window's reach; the SVG's axes, chance line and
// one path per curve.
import { describe, expect, it } from 'vitest';

import { InvalidConfigError } from '../../src/definitions/config-issue';
import { lastQueryKeys } from '../../src/definitions/keys-read';
import { learnFigureSvg } from '../../src/train/learn/figure';
import { gridPoints, type LearnGrid } from '../../src/train/learn/grid';
import { MQAR_PRESET_NAMES, mqarPresetConfig } from '../../src/train/presets/mqar-preset';

const GRID: LearnGrid = { preset: 'mqar-tiny', mechanisms: ['nsa', 'window', 'dense'], seeds: [1, 2], lrs: [1e-3, 3e-3], target: 0.99 };

function fields(g: Partial<LearnGrid>, edit?: Parameters<typeof gridPoints>[1]): string[] {
  try {
    gridPoints({ ...GRID, ...g }, edit);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidConfigError);
    return (e as InvalidConfigError).issues.map((i) => i.field);
  }
  return [];
}

describe('npm run learn: the grid', () => {
  it('one run config per mechanism × seed × lr, the mechanism deciding the attention', () => {
    const points = gridPoints(GRID);
    expect(points).toHaveLength(12);
    const nsa = points.find((p) => p.mechanism === 'nsa')!.config;
    const win = points.find((p) => p.mechanism === 'window')!.config;
    const dense = points.find((p) => p.mechanism === 'dense')!.config;
    expect([nsa.model.attention, nsa.model.nsa!.gates]).toEqual(['nsa', { kind: 'none' }]);
    // window is the mechanism of its own (docs/nsa-spec.md 15.1), the preset's w; nsa-win the gate ablation.
    expect([win.model.attention, win.model.window]).toEqual(['window', { w: nsa.model.nsa!.w }]);
    expect(dense.model.attention).toBe('dense');
    const [moba, ablation] = gridPoints({ ...GRID, mechanisms: ['moba', 'nsa-win'], seeds: [1], lrs: undefined }).map((q) => q.config);
    expect([moba.model.attention, moba.model.moba]).toEqual(['moba', { blockSize: nsa.model.nsa!.lSel, topK: nsa.model.nsa!.nSel }]);
    expect([ablation.model.attention, ablation.model.nsa!.gates]).toEqual(['nsa', { kind: 'force', branch: 'win' }]);
    const p = points.find((q) => q.seed === 2 && q.lr === 1e-3)!;
    expect([p.config.train.seed, p.config.train.lrMax, p.config.train.lrMin]).toEqual([2, 1e-3, 1e-4]);
    // Everything else is the preset's.
    expect(gridPoints({ ...GRID, lrs: undefined })[0].config.train).toEqual({ ...mqarPresetConfig('mqar-tiny').train });
  });

  it('refuses a bad grid before any training, naming the flag or field', () => {
    expect(fields({ preset: 'mqar-huge' as never })).toEqual(['--preset']);
    expect(fields({ mechanisms: ['nsa', 'sparse' as never] })).toEqual(['--mechanisms']);
    expect(fields({ lrs: [0] })).toEqual(['--lrs']);
    expect(fields({ lrs: [-1e-3] })).toEqual(['--lrs']);
    expect(fields({ seeds: [1.5] })).toEqual(['--seeds']);
    expect(fields({ target: 0 })).toEqual(['--target']);
    expect(fields({ steps: 0 })).toEqual(['--steps']);
    // A task that cannot be generated at the sequence length.
    expect(fields({}, (c) => (c.model.seqLen = 40))).toContain('data.recall.minDistance');
  });

  it('--budget: NSA, the window, MoBA and the window ablation read at most that many keys at the last query; dense reads all', () => {
    const T = mqarPresetConfig('mqar-tiny').model.seqLen;
    const points = gridPoints({
      ...GRID,
      mechanisms: ['nsa', 'window', 'moba', 'nsa-win', 'dense'],
      seeds: [1],
      lrs: undefined,
      budget: 40,
    });
    // (nsa-win is NSA reading its window alone: its w is checked below.)
    const keys = Object.fromEntries(
      points.filter((p) => p.mechanism !== 'nsa-win').map((p) => [p.mechanism, lastQueryKeys(T, p.config.model)]),
    );
    expect(keys).toEqual({ nsa: 40, window: 40, moba: 40, dense: T });
    const byName = Object.fromEntries(points.map((p) => [p.mechanism, p.config.model]));
    expect(byName.window.window).toEqual({ w: 40 });
    expect(byName.moba.moba).toEqual({ blockSize: 8, topK: 5 });
    expect(byName['nsa-win'].nsa!.w).toBe(40);
    // NSA keeps its compression and forced blocks; nSel and w share what ncmp(T − 1) leaves.
    const base = mqarPresetConfig('mqar-tiny').model.nsa!;
    expect({ ...byName.nsa.nsa, nSel: 0, w: 0 }).toEqual({ ...base, nSel: 0, w: 0 });
    expect(fields({ budget: 64 })).toEqual(['--budget']); // all of T = 64: dense, not a budget
    expect(fields({ budget: 2.5 })).toEqual(['--budget']);
    expect(fields({ mechanisms: ['moba'], budget: 7 })).toEqual(['--budget']); // below one block of 8
    expect(fields({ mechanisms: ['dense'], budget: 7 })).toEqual([]);
  });

  it('MQAR presets: valid, and every answer beyond what window-only attention can reach', () => {
    for (const name of MQAR_PRESET_NAMES) {
      const c = mqarPresetConfig(name);
      const nsa = c.model.nsa!;
      const reach = c.model.nLayers * (nsa.w - 1 + (c.model.shortConv ?? 0) - 1);
      expect(c.data.recall!.minDistance, name).toBeGreaterThan(reach);
      expect(c.data.recall!.minStart, name).toBeGreaterThanOrEqual(nsa.lSel);
      expect(gridPoints({ ...GRID, preset: name, seeds: [1], lrs: undefined }).length).toBe(3);
    }
  });
});

describe('npm run learn: the figure', () => {
  it('draws the 0–100 % axis, the chance line and one path per curve', () => {
    const svg = learnFigureSvg({
      title: 'mqar-tiny <test>',
      chance: 1 / 64,
      steps: 200,
      curves: [
        {
          label: 'nsa',
          mechanism: 'nsa',
          points: [
            { step: 100, accuracy: 0.5 },
            { step: 200, accuracy: 1 },
          ],
        },
        { label: 'window', mechanism: 'window', points: [{ step: 100, accuracy: 0.02 }] },
      ],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('mqar-tiny &lt;test&gt;');
    expect(svg).toContain('>100%<');
    expect(svg).toContain('chance 1.6%');
    expect(svg.match(/<path /g)).toHaveLength(2);
  });

  it("draws a sparse mechanism's needle selected dotted in its colour, with its own legend entry", () => {
    const svg = learnFigureSvg({
      title: 't',
      chance: 0.01,
      steps: 200,
      curves: [
        {
          label: 'nsa',
          mechanism: 'nsa',
          points: [{ step: 100, accuracy: 0.5 }],
          needle: [
            { step: 100, share: 0.75 },
            { step: 200, share: 1 },
          ],
        },
        { label: 'dense', mechanism: 'dense', points: [{ step: 100, accuracy: 0.9 }], needle: [] },
      ],
    });
    const dotted = svg.match(/<path [^>]*stroke-dasharray="2 3"\/>/g)!;
    expect(dotted).toHaveLength(1);
    expect(dotted[0]).toContain('stroke="#1f77b4"'); // NSA's colour
    expect(dotted[0]).toMatch(/M[\d.]+,[\d.]+ L[\d.]+,40\.0/); // share 1 at the top of the plot (y = 40)
    expect(svg).toContain('>nsa: needle selected<');
    expect(svg).not.toContain('dense: needle selected');
    expect(svg.match(/<path /g)).toHaveLength(3);
  });
});
