// The attention mechanisms besides dense and NSA (docs/nsa-spec.md section 15): sliding-window
// attention alone and MoBA. Each is stated as the NSA configuration whose kernels compute it
// exactly — the window mechanism is NSA's window branch, MoBA is NSA's φ = avg compression with
// l = d = lSel = blockSize, its top-n with forceInit = false, forceLocal = 1 and nSel = topK, and its
// selected branch — so every engine runs the NSA kernels, twins and decoders on these configs and
// nothing else. Validation names each field (`model.window.w`, `model.moba.blockSize`, …).
import type { ConfigIssue } from './config-issue';
import { numSelBlocks } from './nsa-blocks';
import type { NsaConfig } from './nsa-config';

/** Sliding-window attention alone: query t reads positions max(0, t − w + 1) … t. */
export interface WindowConfig {
  w: number;
}

/** MoBA (Lu et al. 2025, arXiv 2502.13189): keys in blocks of blockSize; each query group reads its topK blocks, its own included. */
export interface MobaConfig {
  /** Block length B (the paper's block size). */
  blockSize: number;
  /** Blocks read per query and group, the query's own block included (the paper's k). */
  topK: number;
}

/** The NSA config whose window branch is the window mechanism (the other fields are never read by it). */
export function windowAsNsa(c: WindowConfig): NsaConfig {
  return { l: 1, d: 1, lSel: 1, nSel: 1, w: c.w, phi: 'avg', forceInit: false, forceLocal: 1 };
}

/**
 * The NSA config whose compression (block means), scores, top-n and selected branch are MoBA:
 * l = d = lSel = B, nSel = topK, own block forced, block 0 not. w is never read.
 */
export function mobaAsNsa(c: MobaConfig): NsaConfig {
  return { l: c.blockSize, d: c.blockSize, lSel: c.blockSize, nSel: c.topK, w: 1, phi: 'avg', forceInit: false, forceLocal: 1 };
}

/** Blocks of a T-token sequence, the last possibly partial: ceil(T / B). */
export function mobaBlocks(T: number, c: MobaConfig): number {
  return numSelBlocks(T, mobaAsNsa(c));
}

/** Window mechanism: key rows read by query t per group, min(w, t + 1). */
export function windowReads(t: number, c: WindowConfig): number {
  return Math.min(c.w, t + 1);
}

/** MoBA: key rows read by query t per group: its selected blocks' positions ≤ t (no block means are read as keys). */
export function mobaReads(t: number, selectionRow: ArrayLike<number>, c: MobaConfig): number {
  let n = 0;
  for (let m = 0; m < selectionRow.length; m++) {
    const j = selectionRow[m];
    if (j >= 0) n += Math.min(c.blockSize, t + 1 - j * c.blockSize);
  }
  return n;
}

/** MoBA's keys read when every block is full and topK blocks are read (the budget at T = seqLen): topK · B. */
export const mobaBudget = (c: MobaConfig): number => c.topK * c.blockSize;

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** Every problem of `model.window` for sequences of seqLen tokens, each naming its field. */
export function validateWindowConfig(c: WindowConfig | undefined, seqLen: number): ConfigIssue[] {
  if (!c || typeof c !== 'object') return [{ field: 'model.window', message: "is required when attention is 'window' (e.g. {w: 16})" }];
  if (!isInt(c.w) || c.w < 1) return [{ field: 'model.window.w', message: `must be an integer ≥ 1 (got ${String(c.w)})` }];
  if (isInt(seqLen) && seqLen >= 1 && c.w > seqLen)
    return [
      {
        field: 'model.window.w',
        message: `w (${c.w}) is wider than seqLen (${seqLen}): every query would read its whole past, which is attention 'dense'`,
      },
    ];
  return [];
}

/** Every problem of `model.moba` for sequences of seqLen tokens, each naming its field. */
export function validateMobaConfig(c: MobaConfig | undefined, seqLen: number): ConfigIssue[] {
  if (!c || typeof c !== 'object')
    return [{ field: 'model.moba', message: "is required when attention is 'moba' (e.g. {blockSize: 8, topK: 3})" }];
  const out: ConfigIssue[] = [];
  const okB = isInt(c.blockSize) && c.blockSize >= 1;
  if (!okB) out.push({ field: 'model.moba.blockSize', message: `must be an integer ≥ 1 (got ${String(c.blockSize)})` });
  else if (isInt(seqLen) && seqLen >= 1 && c.blockSize > seqLen)
    out.push({
      field: 'model.moba.blockSize',
      message: `blockSize (${c.blockSize}) is longer than seqLen (${seqLen}): the one block is the query's own, which is attention 'dense'`,
    });
  if (!isInt(c.topK) || c.topK < 1)
    out.push({ field: 'model.moba.topK', message: `must be an integer ≥ 1 (the query's own block counts; got ${String(c.topK)})` });
  else if (okB && isInt(seqLen) && seqLen >= 1 && c.blockSize <= seqLen) {
    const n = mobaBlocks(seqLen, c);
    if (c.topK > n)
      out.push({
        field: 'model.moba.topK',
        message: `topK (${c.topK}) is more than the ${n} blocks of blockSize ${c.blockSize} in seqLen ${seqLen}`,
      });
  }
  return out;
}

/** What a model's attention field holds (model-config.ts's ModelConfig, without importing it). */
interface AttentionFields {
  attention: string;
  nsa?: NsaConfig;
  window?: WindowConfig;
  moba?: MobaConfig;
}

/**
 * The NSA config whose kernels, twins and decoders compute a model's sparse attention: NSA's own,
 * the window's or MoBA's (section 15); undefined for dense attention. The one switch on the
 * attention kind that the block arithmetic of every engine reads.
 */
export function attentionNsaConfig(c: AttentionFields): NsaConfig | undefined {
  switch (c.attention) {
    case 'nsa':
      return c.nsa;
    case 'window':
      return c.window ? windowAsNsa(c.window) : undefined;
    case 'moba':
      return c.moba ? mobaAsNsa(c.moba) : undefined;
    default:
      return undefined;
  }
}
