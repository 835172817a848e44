import { describe, expect, it } from 'vitest';

import { preset } from '../../src/train/presets/presets';
import { runFileName, slug } from '../../src/ui/heartbeat/file-name';

describe('download file names', () => {
  it('name the run, attention, step and content', () => {
    expect(runFileName(preset('tiny'), 'tiny NSA 12:34:56', 120, 'metrics.csv')).toBe('tiny-nsa-12-34-56_nsa_step120_metrics.csv');
    const dense = preset('small');
    dense.model.attention = 'dense';
    expect(runFileName(dense, null, 0, 'heartbeat.jsonl')).toBe('small_dense_step0_heartbeat.jsonl');
    expect(runFileName(null, null, 3, 'config.json')).toBe('run_model_step3_config.json');
  });

  it('slugs keep file names portable', () => {
    expect(slug('Läuft / run #3')).toBe('lauft-run-3');
    expect(slug('***')).toBe('run');
  });
});
