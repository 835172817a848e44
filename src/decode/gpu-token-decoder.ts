// The GPU decoder as generation's TokenDecoder (src/decode/generate.ts): one sequence, the selections
// and the key rows the kernels counted, per NSA layer and group (DSA: its selected tokens, main K/V
// rows per group and indexer rows per layer), copied out of the decoder's readback for the token just fed.
import { attentionNsaConfig } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { describeAdapter } from '../gpu/context';
import type { FedToken, TokenDecoder } from './generate';
import type { GpuDecoder } from './gpu-decoder';

/** Wraps a batch-1 decoder, which it resets: generation starts at position 0. */
export function gpuTokenDecoder(dec: GpuDecoder): TokenDecoder {
  if (dec.batch !== 1) throw new RangeError(`gpuTokenDecoder: the decoder decodes ${dec.batch} sequences; generation needs 1`);
  dec.reset();
  const c: ModelConfig = dec.config;
  // NSA, or a window / MoBA model's NSA config (docs/nsa-spec.md section 15): selections and per-branch reads.
  const nsa = attentionNsaConfig(c);
  // A selection row's width: NSA's nSel, DSA's k.
  const width = c.attention === 'dsa' ? c.dsa?.topK : nsa?.nSel;
  const G = c.nKvGroups;
  return {
    name: `GPU decoder (WebGPU, f32; ${describeAdapter(dec.gpu.adapter)})`,
    async feed(token: number, want: boolean): Promise<FedToken | null> {
      const out = await dec.step([token], want);
      if (!out) return null;
      const selection: Int32Array[] = [];
      const reads: FedToken['reads'] = [];
      if (width !== undefined) {
        for (let l = 0; l < c.nLayers; l++) {
          selection.push(out.selection.slice(l * G * width, (l + 1) * G * width));
          const r = out.reads;
          reads.push(
            Array.from({ length: G }, (_, g) => ({ cmp: r[(l * G + g) * 4], sel: r[(l * G + g) * 4 + 1], win: r[(l * G + g) * 4 + 2] })),
          );
        }
      }
      const indexReads = c.attention === 'dsa' ? Array.from(out.indexReads.subarray(0, c.nLayers)) : [];
      return { t: out.t, logits: out.logits, selection, reads, indexReads };
    },
  };
}
