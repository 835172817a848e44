// Names of the files the page downloads: the run's library name (or its preset), the attention,
// the step and what the file holds, e.g. `tiny-nsa-12-34-56_nsa_step120_metrics.csv`.
import type { RunConfig } from '../../train/config';
import { closestPreset } from '../config/presets';

/** Letters, digits, '.', '_' and '-' only; runs of anything else become one '-'. */
export function slug(text: string): string {
  return (
    text
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '') // accents dropped: é → e
      .replace(/[^\w.-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .toLowerCase() || 'run'
  );
}

export function runFileName(config: RunConfig | null, runName: string | null, step: number, what: string): string {
  const base = slug(runName ?? (config ? closestPreset(config) : 'run'));
  const attention = config?.model.attention ?? 'model';
  const dot = what.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [what.slice(0, dot), what.slice(dot)] : [what, ''];
  return `${base}_${attention}_step${step}_${slug(stem)}${ext}`;
}
