import { describe, expect, it } from 'vitest';

import { chartSettingsSearch, DEFAULT_CHART_SETTINGS, parseChartSettings } from '../../src/ui/charts/chart-settings';

describe('chart settings in the URL', () => {
  it('round-trip, defaults left out, other parameters kept', () => {
    const c = { smoothing: 0.8, log: true, x: 'time', zoom: [10, 250.5] } as const;
    const search = chartSettingsSearch({ ...c, zoom: [10, 250.5] }, '?testHooks=1');
    expect(search).toBe('?testHooks=1&smoothing=0.8&log=1&x=time&zoom=10-250.5');
    expect(parseChartSettings(search)).toEqual({ ...c, zoom: [10, 250.5] });
    expect(chartSettingsSearch(DEFAULT_CHART_SETTINGS, '?smoothing=0.3&log=1')).toBe('');
  });

  it('values that do not parse fall back to the defaults', () => {
    expect(parseChartSettings('?smoothing=2&log=yes&x=wall&zoom=30-10')).toEqual(DEFAULT_CHART_SETTINGS);
    expect(parseChartSettings('?zoom=abc')).toEqual(DEFAULT_CHART_SETTINGS);
  });
});

describe('chart CSV', () => {
  it('lists every shown point as series, x, value (names quoted when needed)', async () => {
    const { chartCsv } = await import('../../src/ui/charts/export-chart');
    expect(
      chartCsv('step', [
        {
          name: 'train',
          points: [
            { x: 0, y: 5.5 },
            { x: 1, y: 4.25 },
          ],
        },
        { name: 'gate, cmp', points: [{ x: 1, y: 0.5 }] },
      ]),
    ).toBe('series,step,value\ntrain,0,5.5\ntrain,1,4.25\n"gate, cmp",1,0.5\n');
  });
});
