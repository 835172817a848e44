// What the config implies, next to it: size, tokens per step, and for NSA the block counts and
// the keys a query reads compared with dense attention (for the window, MoBA and DSA their counts).
import { useState } from 'react';

import { isPhone } from '../components/FoldPanel';
import { formatDuration } from '../run/step-estimate';
import { type ConfigFacts, CROSSOVER_SCAN_LIMIT, type KeyReads, type MechanismFacts, type NsaFacts } from './derived';

const int = (n: number) => Math.round(n).toLocaleString('en-US');

export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return String(n);
}

const pct = (r: KeyReads) => `${((100 * r.total) / r.dense).toFixed(r.total < r.dense / 10 ? 1 : 0)}%`;

function reads(r: KeyReads, exact: boolean, digits: number): string {
  const f = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: digits });
  return `${f(r.cmp)} compressed + ${exact ? '' : '≤ '}${f(r.sel)} selected + ${f(r.win)} window = ${f(r.total)} vs ${f(r.dense)} dense (${pct(r)})`;
}

interface Props {
  facts: ConfigFacts;
  stepSeconds: number | null;
  /** Steps this adapter's rate was measured over; null: the rough estimate. */
  measuredSteps: number | null;
  /** The run's steps (the whole run's time). */
  steps: number;
}

export function DerivedFacts({ facts, stepSeconds, measuredSteps, steps }: Props) {
  const { params, tokensPerStep, trainTokens, nsa, mechanism } = facts;
  // The keys-read figures fold to one line on a phone.
  const [keysOpen, setKeysOpen] = useState(() => !isPhone());
  return (
    <div className="cfg-facts-box">
      <dl className="cfg-facts" data-testid="config-facts" aria-label="Derived from this configuration">
        <div>
          <dt>Parameters</dt>
          <dd data-testid="fact-params" title={params === null ? undefined : int(params)}>
            {params === null ? '–' : formatCount(params)}
          </dd>
        </div>
        <div>
          <dt>Tokens per step</dt>
          <dd data-testid="fact-tokens-per-step">{tokensPerStep === null ? '–' : int(tokensPerStep)}</dd>
        </div>
        <div>
          <dt>Time per step</dt>
          <dd
            data-testid="fact-step-time"
            data-measured={measuredSteps !== null}
            title={
              measuredSteps !== null
                ? `Measured on this adapter: the median of a run's first ${measuredSteps} steps after the first, scaled to this model's size`
                : 'Rough, before any run here: 6 FLOPs per parameter and token at a low rate for this adapter kind (1 GFLOP/s software, 100 GFLOP/s GPU); the first steps of a run calibrate it'
            }
          >
            {stepSeconds === null ? '–' : formatDuration(stepSeconds)}{' '}
            <span className="muted">{measuredSteps !== null ? '(measured)' : '(rough)'}</span>
          </dd>
        </div>
        <div>
          <dt>Whole run</dt>
          <dd data-testid="fact-run-time" title="Training steps only; evaluations add to it">
            {stepSeconds === null || !(Number.isInteger(steps) && steps > 0)
              ? '–'
              : `${formatDuration(stepSeconds * steps)} (${int(steps)} steps)`}
          </dd>
        </div>
        <div>
          <dt>Training tokens</dt>
          <dd data-testid="fact-train-tokens" title={trainTokens === null ? undefined : int(trainTokens)}>
            {trainTokens === null ? '–' : formatCount(trainTokens)}
          </dd>
        </div>
        {nsa && (
          <>
            <div>
              <dt>Compressed blocks</dt>
              <dd data-testid="fact-cmp-blocks">{int(nsa.cmpBlocks)}</dd>
            </div>
            <div>
              <dt>Selection blocks</dt>
              <dd data-testid="fact-sel-blocks">
                {int(nsa.selBlocks)} <span className="muted">({int(nsa.selectedLast)} selected per query)</span>
              </dd>
            </div>
          </>
        )}
      </dl>
      {nsa && (
        <details className="cfg-keys" open={keysOpen} onToggle={(e) => setKeysOpen(e.currentTarget.open)} data-testid="fact-keys">
          <summary>
            Keys read per query: {pct(nsa.mean)} of dense on average at T = {int(nsa.T)}
          </summary>
          <dl className="cfg-facts">
            <div className="cfg-facts-wide">
              <dt>Keys read by the last query (t = {int(nsa.last.dense - 1)})</dt>
              <dd data-testid="fact-keys-last">{reads(nsa.last, nsa.selExact, 0)}</dd>
            </div>
            <div className="cfg-facts-wide">
              <dt>Keys read per query, mean over t</dt>
              <dd data-testid="fact-keys-mean">{reads(nsa.mean, nsa.selExact, 1)}</dd>
            </div>
          </dl>
          <CrossoverNote nsa={nsa} />
        </details>
      )}
      {mechanism && (
        <details className="cfg-keys" open={keysOpen} onToggle={(e) => setKeysOpen(e.currentTarget.open)} data-testid="fact-keys">
          <summary>
            Keys read per query: {share(mechanism.mean, mechanism.denseMean)} of dense on average at T = {int(mechanism.T)}
          </summary>
          <dl className="cfg-facts">
            <div className="cfg-facts-wide">
              <dt>Keys read by the last query (t = {int(mechanism.T - 1)})</dt>
              <dd data-testid="fact-keys-last">{mechanismReads(mechanism, 'last')}</dd>
            </div>
            <div className="cfg-facts-wide">
              <dt>Keys read per query, mean over t</dt>
              <dd data-testid="fact-keys-mean">{mechanismReads(mechanism, 'mean')}</dd>
            </div>
          </dl>
          <p className="muted" data-testid="fact-keys-budget">
            {budgetNote(mechanism)}
          </p>
        </details>
      )}
    </div>
  );
}

const share = (keys: number, dense: number) => `${((100 * keys) / dense).toFixed(keys < dense / 10 ? 1 : 0)}%`;

/** "k keys vs d dense (p%)" for the last query or the mean, with DSA's indexer keys beside them. */
export function mechanismReads(m: MechanismFacts, which: 'last' | 'mean'): string {
  const digits = which === 'last' ? 0 : 1;
  const f = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: digits });
  const keys = which === 'last' ? m.last : m.mean;
  const dense = which === 'last' ? m.denseLast : m.denseMean;
  const index = which === 'last' ? m.indexLast : m.indexMean;
  const what = m.attention === 'window' ? 'window' : m.attention === 'moba' ? 'in its blocks' : 'selected';
  const main = `${f(keys)} ${what} vs ${f(dense)} dense (${share(keys, dense)})`;
  return m.attention === 'dsa' ? `${main}, plus ${f(index)} indexer keys of width d_I scored` : main;
}

/** What bounds the mechanism's reads: w, k·B or k keys per query however long the sequence. */
export function budgetNote(m: MechanismFacts): string {
  const b = int(m.budget);
  switch (m.attention) {
    case 'window':
      return `Each query reads at most its last w = ${b} keys, however long the sequence; dense reads t + 1.`;
    case 'moba':
      return `Each query reads its own block and at most k − 1 of the ${int(m.blocks)} blocks of T: at most k·B = ${b} keys, however long the sequence, plus one mean key per complete earlier block to score them.`;
    case 'dsa':
      return `Each query's main attention reads at most k = ${b} tokens, however long the sequence; its indexer scores all t + 1 earlier tokens with narrow keys, so that part still grows with T.`;
  }
}

/**
 * Where NSA starts to read fewer keys than dense for these settings, and why not before: each query
 * reads a fixed n·l′ + w selected and window keys plus one compressed key per d tokens, dense t + 1.
 */
export function CrossoverNote({ nsa }: { nsa: NsaFacts }) {
  const { last, mean, budget } = nsa.crossover;
  const share = `${Math.round((100 * nsa.mean.total) / nsa.mean.dense)}%`;
  return (
    <p className="muted" data-testid="fact-keys-crossover" data-last={last ?? ''} data-mean={mean ?? ''}>
      {last === null || mean === null ? (
        <>
          NSA reads no fewer keys than dense at any T up to {int(CROSSOVER_SCAN_LIMIT)} with these settings: each query reads a fixed n·l′ +
          w = {int(budget)} selected and window keys plus one compressed key per d tokens, where dense reads t + 1.
        </>
      ) : (
        <>
          NSA reads fewer keys than dense from T = {int(mean)} on average over the queries (the last query from T = {int(last)}); at T ={' '}
          {int(nsa.T)} it reads {share} of dense{mean > nsa.T ? ', more than dense' : ''}. Each query reads a fixed n·l′ + w = {int(budget)}{' '}
          selected and window keys plus one compressed key per d tokens, where dense reads t + 1: the saving grows with T.
        </>
      )}
    </p>
  );
}
