// What the config implies, next to it: size, tokens per step, and for NSA the block counts and
// the keys a query reads compared with dense attention.
import { formatDuration } from '../run/step-estimate';
import type { ConfigFacts, KeyReads } from './derived';

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

export function DerivedFacts({ facts, stepSeconds }: { facts: ConfigFacts; stepSeconds: number | null }) {
  const { params, tokensPerStep, trainTokens, nsa } = facts;
  const moreThanDense = nsa !== null && nsa.last.total >= nsa.last.dense;
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
            title="Rough, before Run: 6 FLOPs per parameter and token at a low rate for this adapter kind (1 GFLOP/s software, 100 GFLOP/s GPU)"
          >
            {stepSeconds === null ? '–' : formatDuration(stepSeconds)}
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
            <div className="cfg-facts-wide">
              <dt>Keys read by the last query (t = {int(nsa.last.dense - 1)})</dt>
              <dd data-testid="fact-keys-last">{reads(nsa.last, nsa.selExact, 0)}</dd>
            </div>
            <div className="cfg-facts-wide">
              <dt>Keys read per query, mean over t</dt>
              <dd data-testid="fact-keys-mean">{reads(nsa.mean, nsa.selExact, 1)}</dd>
            </div>
          </>
        )}
      </dl>
      {moreThanDense && nsa && (
        <p className="muted" data-testid="fact-keys-note">
          At T = {int(nsa.T)} NSA reads at least as many keys as dense attention: its saving grows with the sequence (the paper's settings
          at 64k tokens read under a tenth of them).
        </p>
      )}
    </div>
  );
}
