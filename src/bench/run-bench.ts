// The attention benchmark in order, for npm run bench:attention (alias bench:nsa) and the page's
// worker alike: the adapter line, the training lines (config; per T the NSA-vs-dense line and one
// line per other mechanism asked for, at NSA's budget), the decode lines (config, one per T) and the
// closing summary, each handed to `out` as soon as it is measured. The caller checks the sizes
// first (benchSizeProblem) and may stop between lines (shouldStop).
import { assertNsaConfig } from '../definitions/nsa-config';
import { describeAdapter, type GpuContext } from '../gpu/context';
import { type BenchRow, benchSummary, CFG, type ResolvedBenchNsa, type TimedPair } from './bench-sizes';
import { DECODE_MECHANISMS, decodeBenchRow, decodeConfigLine, type DecodeMechanism, mechanismDecodeRow } from './decode-bench';
import { mechanismTrainRow } from './mechanism-bench';
import { trainBenchRow, trainConfigLine } from './train-bench';

/** Thrown when shouldStop() asked the benchmark to end early. */
export class BenchStopped extends Error {
  constructor() {
    super('benchmark stopped');
  }
}

export async function runNsaBench(
  gpu: GpuContext,
  o: ResolvedBenchNsa,
  out: (line: BenchRow) => void,
  shouldStop: () => boolean = () => false,
): Promise<void> {
  assertNsaConfig(CFG);
  const check = () => {
    if (shouldStop()) throw new BenchStopped();
  };
  const timing = gpu.hasTimestamps ? 'timestamp' : 'wall';
  out({ kind: 'adapter', adapter: describeAdapter(gpu.adapter), architecture: gpu.adapter.architecture, timestamps: gpu.hasTimestamps });
  const train: TimedPair[] = [];
  const decode: TimedPair[] = [];
  const decodeAttention: TimedPair[] = [];
  if (o.train) {
    const t = { repeats: o.trainRepeats, warmup: o.trainWarmup };
    out(trainConfigLine(t, timing));
    for (const T of o.Ts) {
      check();
      const { line, pair } = await trainBenchRow(gpu, T, t);
      out(line);
      train.push(pair);
      for (const m of o.mechanisms) {
        check();
        out(await mechanismTrainRow(gpu, m, T, t, { ms: pair.dense, keys: line.dense_keys_per_head as number }));
      }
    }
  }
  if (o.decode) {
    const d = { layers: o.layers, repeats: o.decodeRepeats, warmup: o.decodeWarmup };
    out(decodeConfigLine(d, timing));
    for (const T of o.Ts) {
      check();
      const row = await decodeBenchRow(gpu, T, d);
      out(row);
      decode.push({ T, nsa: row.nsa_ms, dense: row.dense_ms });
      decodeAttention.push({ T, nsa: row.nsa_attention_ms, dense: row.dense_attention_ms });
      for (const m of o.mechanisms.filter((x): x is DecodeMechanism => (DECODE_MECHANISMS as readonly string[]).includes(x))) {
        check();
        out(await mechanismDecodeRow(gpu, m, T, d, { ms: row.dense_ms, attentionMs: row.dense_attention_ms }));
      }
    }
  }
  out(benchSummary(train, decode, decodeAttention));
}
