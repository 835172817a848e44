// The shared result file: config, metrics, evaluations and selection snapshots survive the round
// trip bit for bit (in the standalone web page too, which draws its charts as static SVG); a file that
// is not one, or a damaged one, is refused naming the file and field.
import { describe, expect, it } from 'vitest';

import type { SelectionSnapshot } from '../../src/definitions/selection-snapshot';
import { taskChance } from '../../src/train/eval/task-chance';
import { recallPreset } from '../../src/train/presets/recall-preset';
import { uiPreset } from '../../src/ui/config/presets';
import { decodeResult, encodeResult, resultFileName, type SharedResult } from '../../src/ui/share/result-file';
import { standaloneResultHtml } from '../../src/ui/share/standalone-html';

function snapshot(): SelectionSnapshot {
  const c = uiPreset('tiny');
  const T = c.model.seqLen;
  const n = c.model.nsa!.nSel;
  return {
    step: 4,
    layer: 1,
    group: 0,
    T,
    cfg: c.model.nsa!,
    H: c.model.nHeads,
    G: c.model.nKvGroups,
    tokens: Int32Array.from({ length: T }, (_, i) => (i * 7) % 256),
    sel: Int32Array.from({ length: T * n }, (_, i) => (i % 3 === 2 ? -1 : i % 5)),
    scores: Float32Array.from({ length: T * 8 }, (_, i) => Math.sin(i) / 3),
    gates: Float32Array.from({ length: T * 2 * 3 }, (_, i) => 1 / (1 + i)),
  };
}

const result = (): SharedResult => ({
  name: 'tiny NSA 09:30',
  createdAt: '2026-11-27T09:30:00.000Z',
  config: uiPreset('tiny'),
  metrics: [{ step: 0, loss: 5.5, lr: 1e-4, gradNorm: 1.5, tokensPerSecond: 300, stepMs: 900, elapsedMs: 900 }],
  evals: [{ step: 1, valLoss: 5.4, accuracy: 0.0625 }],
  snapshots: [snapshot()],
  notes: 'first try',
  tags: ['baseline'],
});

describe('shared result file', () => {
  it('round-trips config, metrics, evaluations and snapshots bit for bit', () => {
    const r = result();
    const back = decodeResult(encodeResult(r), 'x.json');
    expect(back.config).toEqual(r.config);
    expect(back.metrics).toEqual(r.metrics);
    expect(back.evals).toEqual(r.evals);
    expect([back.notes, back.tags]).toEqual(['first try', ['baseline']]);
    const [s] = back.snapshots;
    expect(s.tokens).toBeInstanceOf(Int32Array);
    expect([...s.tokens]).toEqual([...r.snapshots[0].tokens]);
    expect([...s.sel]).toEqual([...r.snapshots[0].sel]);
    expect(new Uint32Array(s.scores!.buffer)).toEqual(new Uint32Array(r.snapshots[0].scores!.buffer));
    expect([...s.gates!]).toEqual([...r.snapshots[0].gates!]);
    expect(s.recorded).toBeUndefined();
    expect({ ...s, tokens: 0, sel: 0, scores: 0, gates: 0 }).toEqual({ ...r.snapshots[0], tokens: 0, sel: 0, scores: 0, gates: 0 });
  });

  it('refuses what is not a result, naming the file and the field', () => {
    expect(() => decodeResult('{', 'a.json')).toThrow('a.json: not a shared result (not JSON)');
    expect(() => decodeResult('{"format":"other"}', 'b.json')).toThrow('b.json: not a shared result of this page');
    const bad = JSON.parse(encodeResult(result())) as { config: { model: { dk: number } }; snapshots: Array<{ T: number }> };
    bad.config.model.dk = 15;
    expect(() => decodeResult(JSON.stringify(bad), 'c.json')).toThrow(/^c\.json: config\.model\.dk: /);
    const short = JSON.parse(encodeResult(result())) as { snapshots: Array<{ T: number }> };
    short.snapshots[0].T = 32;
    expect(() => decodeResult(JSON.stringify(short), 'd.json')).toThrow('d.json: snapshots[0]: 64 tokens for T = 32');
  });

  it('the standalone page: charts of the same series as static SVG, the accuracy against chance; it embeds the file, reopened bit for bit', () => {
    const r = { ...result(), name: 'a </script> <b>run</b>', notes: 'x < y & </script>' };
    const recall = recallPreset();
    recall.train.evalBatches = 1;
    const task = { ...r, config: recall, metrics: [0, 1, 2].map((step) => ({ ...r.metrics[0], step, loss: 5 - step / 3 })) };
    const html = standaloneResultHtml(task, encodeResult(task));
    // One script element (the embedded file): the name and notes cannot close it early.
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html).toContain('<h1 data-testid="standalone-name">a &lt;/script&gt; &lt;b&gt;run&lt;/b&gt;</h1>');
    const back = decodeResult(html, 'page.html');
    expect([back.name, back.notes, back.config, back.metrics, back.evals]).toEqual([
      task.name,
      task.notes,
      task.config,
      task.metrics,
      task.evals,
    ]);
    expect([...back.snapshots[0].sel]).toEqual([...task.snapshots[0].sel]);
    // The drawn series: the raw losses as they are, the validation loss and accuracy at their steps.
    const values = (series: string) => new RegExp(`data-series="${series}"[^>]*data-values="([^"]*)"`).exec(html)?.[1];
    expect(values('train-raw')).toBe('0:5 1:4.666666666666667 2:4.333333333333333');
    expect(values('train')).toMatch(/^0:5 1:[\d.]+ 2:[\d.]+$/);
    expect(values('val')).toBe('1:5.4');
    expect(values('accuracy')).toBe('1:0.0625');
    expect(html).toContain(`data-reference="${taskChance(recall)}"`);
    expect(html).toMatch(/class="band" data-band="0,0\.\d+"/); // chance ± 2σ, clipped at 0 (8 answers)
    // Text data: no accuracy chart.
    expect(standaloneResultHtml(r, encodeResult(r))).not.toContain('standalone-accuracy');
    expect(() => decodeResult('<!doctype html><p>hi</p>', 'other.html')).toThrow(
      'other.html: a web page, but not a result page of this playground',
    );
  });

  it('names the file after the run', () => {
    expect(resultFileName('tiny NSA 09:30', 'html')).toBe('tiny_NSA_09_30.nsa-result.html');
    expect(resultFileName('tiny NSA 09:30')).toBe('tiny_NSA_09_30.nsa-result.json');
    expect(resultFileName('///')).toBe('run.nsa-result.json');
  });
});
