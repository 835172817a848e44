// npm run bench:nsa's flags, checked without the GPU (every refusal is a UsageError naming its
// flag), and the refusal of sizes the adapter cannot hold. The benchmark itself: src/bench/.
import {
  type BenchLimits,
  type BenchNsaOptions,
  benchSizeProblem,
  DECODE_LAYERS,
  DECODE_MAX_T,
  M,
  type ResolvedBenchNsa,
} from '../bench/bench-sizes';
import { OTHER_MECHANISMS, type OtherMechanism } from '../bench/mechanism-bench';
import { type ArgSpec, intFlag, parseArgs } from './args';
import { UsageError } from './usage';

export const BENCH_NSA_USAGE =
  'usage: npm run bench:attention -- [--T 1024,2048,...] [--repeats N] [--warmup N] [--mechanisms window,moba,dsa|none] [--decode [--train] [--layers N]]\n' +
  '       (npm run bench:nsa is the same command)';

export const BENCH_NSA_ARGS: ArgSpec = {
  values: ['T', 'repeats', 'warmup', 'layers', 'mechanisms'],
  booleans: ['decode', 'train', 'help'],
  usage: BENCH_NSA_USAGE,
};

/** The flags, checked without the GPU (every refusal is a UsageError naming its flag). */
export function benchNsaOptions(argv: readonly string[]): BenchNsaOptions {
  const args = parseArgs(argv, BENCH_NSA_ARGS);
  const decode = args.flags.has('decode');
  const alsoTrain = args.flags.has('train');
  for (const f of ['train', 'layers'])
    if (args.flags.has(f) && !decode)
      throw new UsageError(`--${f} goes with --decode (without it bench:nsa measures training only)\n${BENCH_NSA_USAGE}`, { flag: f });
  let Ts: number[] | undefined;
  const tText = args.flags.get('T');
  if (tText !== undefined) {
    Ts = tText
      .split(',')
      .filter((s) => s.trim() !== '')
      .map((s) => {
        const T = Number(s.trim());
        if (!/^\s*\d+\s*$/.test(s) || !Number.isSafeInteger(T) || T < 1)
          throw new UsageError(`--T: '${s}' is not a positive integer`, { flag: 'T', value: tText });
        return T;
      });
    if (!Ts.length) throw new UsageError(`--T: no lengths in '${tText}'`, { flag: 'T', value: tText });
    if (decode)
      for (const T of Ts)
        if (T > DECODE_MAX_T)
          throw new UsageError(
            `--T: ${T} is longer than a model's longest context, ${DECODE_MAX_T} (model.seqLen); --decode needs --T ≤ ${DECODE_MAX_T}`,
            {
              flag: 'T',
              value: tText,
            },
          );
  }
  const repeats = intFlag(args, 'repeats');
  const warmup = intFlag(args, 'warmup');
  if (repeats !== undefined && repeats < 1) throw new UsageError('--repeats must be ≥ 1', { flag: 'repeats' });
  if (warmup !== undefined && warmup < 0) throw new UsageError('--warmup must be ≥ 0', { flag: 'warmup' });
  const layers = intFlag(args, 'layers') ?? DECODE_LAYERS;
  if (layers < 1 || layers > M.nLayers)
    throw new UsageError(`--layers must be in [1, ${M.nLayers}] (m7c-125m has ${M.nLayers}; got ${layers})`, { flag: 'layers' });
  const train = !decode || alsoTrain;
  const mText = args.flags.get('mechanisms');
  let mechanisms: OtherMechanism[] = [...OTHER_MECHANISMS];
  if (mText !== undefined) {
    const names = mText.split(',').map((s) => s.trim());
    mechanisms = [];
    if (!(names.length === 1 && names[0] === 'none'))
      for (const n of names) {
        if (!(OTHER_MECHANISMS as readonly string[]).includes(n))
          throw new UsageError(`--mechanisms: '${n}' is not one of ${OTHER_MECHANISMS.join(', ')} (or none)`, {
            flag: 'mechanisms',
            value: mText,
          });
        if (!mechanisms.includes(n as OtherMechanism)) mechanisms.push(n as OtherMechanism);
      }
  }
  return { Ts, train, decode, repeats, warmup, layers, mechanisms };
}

/** Refuses (UsageError on --T) a T whose tensors do not fit the adapter, naming the largest that fits. */
export function assertBenchSizes(o: ResolvedBenchNsa, limits: BenchLimits): void {
  const p = benchSizeProblem(o, limits);
  if (p)
    throw new UsageError(`--T: ${p.T} ${p.needs}${p.fitsUpTo >= 1 ? ` (--T ≤ ${p.fitsUpTo} fits)` : ''}`, {
      flag: 'T',
      value: String(p.T),
    });
}
