// One line per folded config section: the values a researcher scans for (attention, depth, width,
// T; the NSA blocks, the window, MoBA's and DSA's settings; steps, batch, learning rate; the data), shown in the section's summary so the
// config reads at a glance with every section folded.
import type { RunConfig } from '../../train/config';
import type { SectionId } from './fields';

/** A draft value as typed (a field may hold text that is not a number yet). */
const v = (x: unknown): string => (x === undefined || x === null || x === '' ? '–' : String(x));

export function sectionSummary(id: SectionId, c: RunConfig): string {
  const m = c.model;
  const t = c.train;
  switch (id) {
    case 'model':
      return `${v(m.attention)} · ${v(m.nLayers)} layers · C ${v(m.dim)} · H ${v(m.nHeads)}, G ${v(m.nKvGroups)} · T ${v(m.seqLen)}`;
    case 'nsa':
      return m.nsa
        ? `l ${v(m.nsa.l)} · d ${v(m.nsa.d)} · l′ ${v(m.nsa.lSel)} · n ${v(m.nsa.nSel)} · w ${v(m.nsa.w)}`
        : `${v(m.attention)} attention: not used`;
    case 'window':
      return m.window ? `w ${v(m.window.w)}` : `${v(m.attention)} attention: not used`;
    case 'moba':
      return m.moba ? `B ${v(m.moba.blockSize)} · k ${v(m.moba.topK)}` : `${v(m.attention)} attention: not used`;
    case 'dsa':
      return m.dsa
        ? `k ${v(m.dsa.topK)} · indexer ${v(m.dsa.indexHeads)} × ${v(m.dsa.indexDim)} · warm-up ${v(m.dsa.warmupSteps)} · λ ${v(m.dsa.lossWeight)}`
        : `${v(m.attention)} attention: not used`;
    case 'train':
      return `${v(t.steps)} steps · batch ${v(t.batchSize)} × ${v(t.gradAccum)} · lr ${v(t.lrMax)} · eval every ${v(t.evalEvery)}`;
    case 'data':
      return `${v(c.data.source)} · ${v(c.data.tokenizer)}`;
  }
}
