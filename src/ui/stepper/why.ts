// Why query t read what it read, per selected block (NSA, MoBA) or token (DSA): forced (NSA's block 0
// or local blocks, MoBA's own block) or picked by score, with its rank among the candidates that
// compete for the free slots and the score ties the "lower index wins" rule settled (docs/nsa-spec.md
// section 6, 15.2; docs/dsa-spec.md section 3). Pure, from the snapshot alone.
import { forcedBlocks, numSelCandidates } from '../../definitions/nsa-blocks';
import { scoreRow, selectionRow, type SelectionSnapshot, snapshotMechanism } from '../../definitions/selection-snapshot';

export interface WhyItem {
  /** Block (NSA, MoBA) or token (DSA) index. */
  index: number;
  /** Its positions ≤ t: [start, end). */
  start: number;
  end: number;
  /** 'forced': read whatever the scores (NSA's forced blocks, MoBA's own block); 'score': picked by score. */
  reason: 'forced' | 'score';
  /** The score behind the pick (null when not recorded). */
  score: number | null;
  /** 1-based rank among the scored candidates (score descending, ties to the lower index); null when forced. */
  rank: number | null;
  /** Whether a candidate left out has exactly its score (the tie went to the lower index). */
  tie: boolean;
  /** The sentence shown. */
  text: string;
}

export interface WhyRow {
  mechanism: 'nsa' | 'moba' | 'dsa';
  /** Candidates competing for the free slots (not forced). */
  scored: number;
  /** Free slots: nSel minus the forced blocks, at most the scored candidates. */
  slots: number;
  items: WhyItem[];
  /** The best candidate left out (null when every candidate was read or scores are missing). */
  bestLeftOut: { index: number; score: number } | null;
}

const fmt = (x: number) => (Math.abs(x) >= 1e-3 || x === 0 ? x.toFixed(4) : x.toExponential(2));

/** The reasons behind query t's selection row (the row as recorded, even if it broke a rule). */
export function selectionWhy(s: SelectionSnapshot, t: number): WhyRow {
  const c = s.cfg;
  const mechanism = snapshotMechanism(s);
  const row = Array.from(selectionRow(s, t)).filter((j) => j >= 0);
  const chosen = new Set(row);
  const forced = new Set(forcedBlocks(t, c));
  const scores = scoreRow(s, t);
  const n = numSelCandidates(t, c);
  // The scored candidates in the order the top-n takes them: score descending, ties to the lower index.
  const order = Array.from({ length: n }, (_, j) => j).filter((j) => !forced.has(j));
  if (scores) order.sort((a, b) => scores[b] - scores[a] || a - b);
  const rankOf = new Map(order.map((j, i) => [j, i + 1]));
  const left = scores ? order.filter((j) => !chosen.has(j)) : [];
  const bestLeftOut = left.length ? { index: left[0], score: scores![left[0]] } : null;
  const unit = mechanism === 'dsa' ? 'token' : 'block';
  const scoreName = mechanism === 'dsa' ? 'index score I' : mechanism === 'moba' ? 'score P (q·mean K)' : 'score P';
  const items = row.map((j): WhyItem => {
    const start = j * c.lSel;
    const end = Math.min(start + c.lSel, t + 1);
    const score = scores ? scores[j] : null;
    const isForced = forced.has(j);
    const rank = isForced ? null : (rankOf.get(j) ?? null);
    const tie = !isForced && score !== null && bestLeftOut !== null && score === bestLeftOut.score;
    let text: string;
    if (isForced) {
      const own = j === Math.floor(t / c.lSel);
      text =
        mechanism === 'moba'
          ? `its own block: always read, cut at t (${end - start} of ${c.lSel} keys)`
          : j === 0 && c.forceInit
            ? 'forced: block 0, always read'
            : own
              ? 'forced: the block holding t'
              : 'forced: a local block before t';
    } else {
      text =
        score === null
          ? `picked by score (scores not recorded)`
          : `${scoreName} = ${fmt(score)}, rank ${rank ?? '?'} of ${order.length} ${unit}${order.length === 1 ? '' : 's'} scored`;
      if (tie) text += `; tied with ${unit} ${bestLeftOut!.index}, left out: the lower index wins`;
    }
    return { index: j, start, end, reason: isForced ? 'forced' : 'score', score, rank, tie, text };
  });
  return { mechanism, scored: order.length, slots: Math.min(c.nSel - forced.size, order.length), items, bestLeftOut };
}
