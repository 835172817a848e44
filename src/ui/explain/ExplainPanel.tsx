// "How NSA works": the three branches of one query drawn from the current config's numbers
// (compressed blocks, selection blocks by score with the forced ones, the sliding window, the
// gates), a t slider to move the query, and a link to the paper. A window, MoBA or DSA model gets
// its own mechanism's explanation instead, from its numbers (mechanism-text.ts).
import './explain.css';

import { useId, useMemo, useState } from 'react';

import type { ModelConfig, ModelNsaConfig } from '../../definitions/model-config';
import { CROSSOVER_SCAN_LIMIT, keysCrossover } from '../config/derived';
import { explainDiagram } from './diagram';
import { ExplainSvg } from './ExplainSvg';
import { type MechanismExplanation, mechanismExplanation } from './mechanism-text';

export const PAPER_URL = 'https://arxiv.org/abs/2502.11089';

const int = (n: number) => n.toLocaleString('en-US');

/**
 * `nsa` and `T` come from a validated config (the page passes the last valid one while the draft
 * has errors, with `stale` set).
 */
export function ExplainPanel({
  nsa,
  T,
  dense,
  stale,
  model,
}: {
  nsa: ModelNsaConfig | undefined;
  T: number;
  dense: boolean;
  stale?: boolean;
  /** The model: a window, MoBA or DSA model is explained as its own mechanism (absent: NSA's picture). */
  model?: Pick<ModelConfig, 'attention' | 'seqLen' | 'window' | 'moba' | 'dsa'>;
}) {
  const sliderId = useId();
  const [tPicked, setT] = useState<number | null>(null);
  const ok = nsa !== undefined && Number.isInteger(T) && T >= 1;
  const t = ok ? Math.min(tPicked ?? T - 1, T - 1) : 0;
  const okT = Number.isInteger(T) && T >= 1;
  const tm = okT ? Math.min(tPicked ?? T - 1, T - 1) : 0;
  const mechanism = model && okT ? mechanismExplanation(model, tm) : null;
  if (mechanism) return <MechanismPanel e={mechanism} T={T} t={tm} sliderId={sliderId} onT={setT} stale={stale} />;
  return (
    <details className="panel explain" data-testid="explain" open={!dense}>
      <summary>
        <h2>How NSA works</h2>
      </summary>
      <p>
        Native Sparse Attention (
        <a href={PAPER_URL} target="_blank" rel="noreferrer">
          Yuan et al., 2025, arXiv 2502.11089
        </a>
        ) lets each query read three kinds of keys instead of all earlier ones, and mixes the three outputs with learned gates.
        {dense && ' This config trains dense attention; the diagram shows what NSA would read with its NSA settings.'}
      </p>
      {stale && (
        <p className="muted" data-testid="explain-stale">
          Drawn for the last valid configuration: fix the fields marked in the config to update it.
        </p>
      )}
      {!ok ? (
        <p className="muted">Fix the config's NSA fields to see the diagram.</p>
      ) : (
        <ExplainBody nsa={nsa} T={T} t={t} sliderId={sliderId} onT={setT} />
      )}
    </details>
  );
}

function ExplainBody({
  nsa,
  T,
  t,
  sliderId,
  onT,
}: {
  nsa: ModelNsaConfig;
  T: number;
  t: number;
  sliderId: string;
  onT: (t: number) => void;
}) {
  const d = explainDiagram(T, t, nsa);
  const crossover = useMemo(() => keysCrossover(nsa), [nsa]);
  const forced = d.sel.filter((b) => b.role === 'forced').length;
  const free = d.sel.length - forced;
  const allFit = d.pickedByScore === free;
  return (
    <>
      <label htmlFor={sliderId} className="explain-t">
        Query t = <strong data-testid="explain-t">{int(t)}</strong>
        <input id={sliderId} type="range" min={0} max={T - 1} value={t} onChange={(e) => onT(Number(e.target.value))} />
      </label>
      <ExplainSvg diagram={d} nsa={nsa} />
      <details className="explain-how" data-testid="explain-how">
        <summary>How to read it: the three branches and the gates</summary>
        <ol className="explain-steps">
          <li>
            <strong>Compressed</strong>: every d = {nsa.d} tokens a block of l = {nsa.l} keys is compressed by φ ({nsa.phi}) into one key.
            Query t sees the <span data-testid="explain-cmp">{int(d.cmp.length)}</span> blocks that end at or before it.
          </li>
          <li>
            <strong>Scores by overlap</strong>: the query's attention probabilities over those compressed keys, summed over the heads of its
            K/V group, give each selection block of l′ = {nsa.lSel} tokens a score — each compressed block adds its probability times the
            fraction of it that overlaps the selection block.
          </li>
          <li>
            <strong>Top-n</strong>: the n = {nsa.nSel} blocks with the highest scores are read in full.{' '}
            {forced > 0 && (
              <>
                {forced} of them are forced{nsa.forceInit ? ' (block 0' : ' ('}
                {nsa.forceLocal > 0
                  ? `${nsa.forceInit ? ', ' : ''}the ${nsa.forceLocal} block${nsa.forceLocal > 1 ? 's' : ''} ending at t`
                  : ''}
                ).{' '}
              </>
            )}
            <span data-testid="explain-sel">
              {allFit
                ? `Query t has ${int(d.sel.length)} candidate block${d.sel.length === 1 ? '' : 's'}: all fit in n, so nothing is left out yet.`
                : `${int(d.pickedByScore)} of the other ${int(free)} candidates are picked by score (the diagram shows an example; the stepper shows the model's real choice).`}
            </span>
          </li>
          <li>
            <strong>Window</strong>: the last w = {nsa.w} tokens, always.
          </li>
          <li>
            <strong>Gates</strong>: per head, o = g<sub>cmp</sub>·o<sub>cmp</sub> + g<sub>sel</sub>·o<sub>sel</sub> + g<sub>win</sub>·o
            <sub>win</sub> with sigmoid gates computed from the token's hidden state
            {nsa.gates.kind !== 'none' ? ` (this config ablates them: ${JSON.stringify(nsa.gates)})` : ''}.
          </li>
        </ol>
      </details>
      <p data-testid="explain-reads">
        Query t reads {int(d.reads.cmp)} compressed + {int(d.reads.sel)} selected + {int(d.reads.win)} window = {int(d.reads.total)} keys,
        where dense attention reads {int(d.reads.dense)}.
        {d.reads.total >= d.reads.dense &&
          (crossover.last === null
            ? ` With these settings NSA reads no fewer keys than dense at any T up to ${int(CROSSOVER_SCAN_LIMIT)}.`
            : ` At this length NSA reads no fewer keys than dense: the fixed n·l′ + w = ${int(crossover.budget)} keys outweigh the saving until T = ${int(crossover.last)} for the last query (${int(crossover.mean ?? 0)} on average).`)}
      </p>
    </>
  );
}

/** A window, MoBA or DSA model: what query t scores and reads, from the config's numbers. */
function MechanismPanel({
  e,
  T,
  t,
  sliderId,
  onT,
  stale,
}: {
  e: MechanismExplanation;
  T: number;
  t: number;
  sliderId: string;
  onT: (t: number) => void;
  stale?: boolean;
}) {
  return (
    <details className="panel explain" data-testid="explain" data-attention={e.attention} open>
      <summary>
        <h2>{e.title}</h2>
      </summary>
      <p data-testid="explain-intro">
        {e.intro}
        {e.paper && (
          <>
            {' '}
            (
            <a href={e.paper.url} target="_blank" rel="noreferrer">
              {e.paper.label}
            </a>
            )
          </>
        )}
      </p>
      {stale && (
        <p className="muted" data-testid="explain-stale">
          Drawn for the last valid configuration: fix the fields marked in the config to update it.
        </p>
      )}
      <label htmlFor={sliderId} className="explain-t">
        Query t = <strong data-testid="explain-t">{int(t)}</strong>
        <input id={sliderId} type="range" min={0} max={T - 1} value={t} onChange={(ev) => onT(Number(ev.target.value))} />
      </label>
      <ol className="explain-steps" data-testid="explain-steps">
        {e.steps.map((s) => (
          <li key={s}>{s}</li>
        ))}
      </ol>
      <p data-testid="explain-reads">{e.reads}</p>
    </details>
  );
}
