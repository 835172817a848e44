// The selected generated token: what it is, the query that produced it, and the key ranges that
// query selected in every (layer, group) — for DSA, the tokens the lightning indexer picked in every
// layer and the keys it read.
import { visibleText } from '../stepper/tokens';
import { type PieceRanges, pieceRanges, type PieceTokens, pieceTokens } from './trace';
import type { GeneratedPiece, GenerationModel } from './types';

export function TokenDetails({ piece, model }: { piece: GeneratedPiece; model: GenerationModel }) {
  let rows: PieceRanges[] = [];
  let error: string | null = null;
  if (model.dsa) {
    let layers: PieceTokens[] = [];
    try {
      layers = pieceTokens(piece, model.dsa.topK, model.G);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    return <DsaTokenDetails piece={piece} layers={layers} error={error} k={model.dsa.topK} />;
  }
  if (model.nsa) {
    try {
      rows = pieceRanges(piece, model.nsa, model.G);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
  }
  return (
    <div className="gen-details" data-testid="gen-details" data-index={piece.index} data-t={piece.t}>
      <TokenHeading piece={piece} />
      {!model.nsa ? (
        <p className="muted">Dense attention: every query reads all earlier keys; there is no selection to show.</p>
      ) : error ? (
        <p className="error" role="alert" data-testid="gen-details-error">
          Invalid selection: {error}
        </p>
      ) : (
        <table className="gen-ranges" data-testid="gen-token-ranges">
          <caption className="muted">Key ranges query {piece.t} selected while decoding</caption>
          <thead>
            <tr>
              <th scope="col">Layer</th>
              <th scope="col">Group</th>
              <th scope="col">Selected ranges [start, end)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={`${r.layer}/${r.group}`}>
                <td>{r.layer}</td>
                <td>{r.group}</td>
                <td>
                  {r.ranges.map((x) => (
                    <span
                      key={x.start}
                      className={`gen-range${x.forced.some(Boolean) ? ' has-forced' : ''}`}
                      data-testid="gen-range"
                      data-layer={r.layer}
                      data-group={r.group}
                      data-start={x.start}
                      data-end={x.end}
                      title={`blocks ${x.blocks.join(', ')}${x.forced.some(Boolean) ? ` (forced: ${x.blocks.filter((_, i) => x.forced[i]).join(', ')})` : ''}`}
                    >
                      [{x.start}, {x.end})
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function DsaTokenDetails({ piece, layers, error, k }: { piece: GeneratedPiece; layers: PieceTokens[]; error: string | null; k: number }) {
  return (
    <div className="gen-details" data-testid="gen-details" data-index={piece.index} data-t={piece.t}>
      <TokenHeading piece={piece} />
      {error ? (
        <p className="error" role="alert" data-testid="gen-details-error">
          Invalid selection: {error}
        </p>
      ) : (
        <table className="gen-ranges" data-testid="gen-token-dsa">
          <caption className="muted">
            Tokens query {piece.t} attended while decoding: the top-{k} of the lightning indexer&apos;s scores (every head of every group
            reads the same ones)
          </caption>
          <thead>
            <tr>
              <th scope="col">Layer</th>
              <th scope="col">Selected tokens</th>
              <th scope="col">K/V rows read per group</th>
              <th scope="col">Indexer keys scored</th>
            </tr>
          </thead>
          <tbody>
            {layers.map((r) => (
              <tr key={r.layer} data-testid="gen-dsa-layer" data-layer={r.layer}>
                <td>{r.layer}</td>
                <td>{r.tokens.join(', ')}</td>
                <td>
                  {r.keysRead} of {piece.t + 1}
                </td>
                <td>{r.indexKeysRead}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** The token, its id and the query whose logits it was sampled from. */
function TokenHeading({ piece }: { piece: GeneratedPiece }) {
  return (
    <p>
      Token <span className="tok tok-query">{visibleText(piece.text) || '∅'}</span> <span className="muted">id {piece.token}</span>, sampled
      from the logits of query <strong>t = {piece.t}</strong>.
    </p>
  );
}
