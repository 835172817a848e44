// The current query's merged ranges as text, with the tokens each one covers (the query token
// highlighted), plus the window and compressed spans for context.
import { type SelectionSnapshot, snapshotMechanism, type SnapshotRange } from '../../definitions/selection-snapshot';
import { cmpFrontier, windowSpan } from './geometry';
import type { TokenRole } from './task-roles';
import { type DecodeFn, tokenText } from './tokens';

interface Props {
  snapshot: SelectionSnapshot;
  t: number;
  ranges: SnapshotRange[];
  decode?: DecodeFn;
  /** Task roles of the positions (recall and passkey runs), shown as token colours and in the titles. */
  roles?: readonly TokenRole[];
}

export function RangeList({ snapshot: s, t, ranges, decode, roles }: Props) {
  const win = windowSpan(t, s.cfg);
  const f = cmpFrontier(t, s.cfg);
  return (
    <div className="stepper-ranges">
      <p className="stepper-range-text" data-testid="stepper-ranges-text">
        <span className="muted">selected ranges </span>
        {ranges.map((r) => `[${r.start}, ${r.end})`).join(' ')}
      </p>
      <ol className="stepper-range-list" data-testid="stepper-ranges" aria-label={`Selected ranges at t = ${t}`}>
        {ranges.map((r) => (
          <li
            key={r.start}
            data-testid="stepper-range"
            data-start={r.start}
            data-end={r.end}
            data-blocks={r.blocks.join(',')}
            data-forced={r.forced.some(Boolean)}
          >
            <div className="stepper-range-head">
              <code>
                [{r.start}, {r.end})
              </code>
              <span className="muted">
                {r.blocks.length > 1 ? `blocks ${r.blocks[0]}–${r.blocks[r.blocks.length - 1]}` : `block ${r.blocks[0]}`}
              </span>
              {r.blocks.map((j, i) =>
                r.forced[i] ? (
                  <span key={j} className="badge badge-forced" data-testid="stepper-forced" data-block={j}>
                    forced {j}
                  </span>
                ) : null,
              )}
            </div>
            <TokenRun tokens={s.tokens} start={r.start} end={r.end} query={t} decode={decode} roles={roles} />
          </li>
        ))}
      </ol>
      <p className="muted stepper-context" data-testid="stepper-context">
        {contextLine(s, t, win, f)}
      </p>
    </div>
  );
}

/** What the query saw besides its selection: NSA's window and compressed keys, MoBA's scored block means, DSA's indexer keys. */
export function contextLine(s: SelectionSnapshot, t: number, win: { lo: number; hi: number }, f: number): string {
  const mech = snapshotMechanism(s);
  if (mech === 'moba') {
    const bt = Math.floor(t / s.cfg.lSel);
    return `own block [${bt * s.cfg.lSel}, ${t + 1}) · ${bt} complete earlier block${bt === 1 ? '' : 's'} scored by their mean key`;
  }
  if (mech === 'dsa') return `the indexer scored all ${t + 1} tokens [0, ${t + 1}) with its narrow keys`;
  return `window [${win.lo}, ${win.hi + 1}) · compressed ${f < 0 ? 'none visible yet' : `covers [0, ${f + 1})`}`;
}

function TokenRun({
  tokens,
  start,
  end,
  query,
  decode,
  roles,
}: {
  tokens: Int32Array;
  start: number;
  end: number;
  query: number;
  decode?: DecodeFn;
  roles?: readonly TokenRole[];
}) {
  const out = [];
  for (let p = start; p < end; p++) {
    const id = tokens[p];
    const text = tokenText(decode, id);
    const role = roles?.[p];
    const cls = `tok${text === null ? ' tok-id' : ''}${p === query ? ' tok-query' : ''}${role && role !== 'filler' ? ` tok-role-${role}` : ''}`;
    out.push(
      <span
        key={p}
        className={cls}
        title={`position ${p}, token id ${id}${role ? `, ${role}` : ''}`}
        data-role={role}
        data-testid={p === query ? 'stepper-query-token' : undefined}
      >
        {text === null ? String(id) : text}
      </span>,
    );
  }
  return <div className="tok-run">{out}</div>;
}
