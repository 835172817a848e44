// The shared result file: config, metrics, evaluations and selection snapshots survive the round
// trip bit for bit; a file that is not one, or a damaged one, is refused naming the file and field.
import { describe, expect, it } from 'vitest';

import type { SelectionSnapshot } from '../../src/definitions/selection-snapshot';
import { uiPreset } from '../../src/ui/config/presets';
import { decodeResult, encodeResult, resultFileName, type SharedResult } from '../../src/ui/share/result-file';

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

  it('names the file after the run', () => {
    expect(resultFileName('tiny NSA 09:30')).toBe('tiny_NSA_09_30.nsa-result.json');
    expect(resultFileName('///')).toBe('run.nsa-result.json');
  });
});
