// The generate command, as a function of argv and two output sinks (the entry point
// src/cli/generate.ts wires it to the process; tests call it in-process). Decodes on the GPU
// (src/decode/gpu-decoder.ts: KV caches per layer and branch, counted reads); --cpu uses the
// float64 CPU decoder, the oracle (no GPU needed).
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { cpuTokenDecoder, generate, type GenerateResult, type TokenDecoder } from '../decode/generate';
import { formatConfigIssues } from '../definitions/config-issue';
import { attentionNsaConfig } from '../definitions/mechanisms';
import type { ModelConfig } from '../definitions/model-config';
import { validateModelConfig } from '../definitions/model-config';
import {
  CHECKPOINT_FILE,
  LEGACY_WEIGHTS_FILES,
  readRunWeights,
  type RunWeights,
  RunWeightsNotFoundError,
} from '../train/checkpoint/run-files';
import type { RunConfig } from '../train/config';
import { createTokenizer, type Tokenizer } from '../train/data/tokenizer';
import { type ArgSpec, intFlag, numFlag, parseArgs } from './args';
import { isUserError } from './main';
import { asUsage, UsageError } from './usage';

export const GENERATE_USAGE = `usage: npm run generate -- --run <run> --prompt "text" [options]
  --run NAME          run folder under --runs-dir (npm run train's; its checkpoint.safetensors is read,
                      so a run stopped mid-way generates from its last checkpoint)
  --prompt TEXT       text to continue (tokenized with the run's tokenizer)
  --tokens N          most tokens to generate (default 100; stops earlier at the context length)
  --temperature X     0 = greedy argmax (default 0.8)
  --top-k K           sample among the K most likely tokens; 0 = all (default 40)
  --top-p P           then keep the most likely tokens up to probability P, in (0, 1] (default 1 = all)
  --seed S            sampling seed (default 1)
  --runs-dir DIR      where runs live (default runs)
  --cpu               decode on the float64 CPU decoder (the oracle) instead of the GPU
  --help`;

const ARGS: ArgSpec = {
  values: ['run', 'prompt', 'tokens', 'temperature', 'top-k', 'top-p', 'seed', 'runs-dir'],
  booleans: ['help', 'cpu'],
  usage: GENERATE_USAGE,
};

/** A GPU decoder over a checkpoint's weights (src/cli/gpu-decoder-node.ts in a Node process). */
export type GpuDecoderSource = (
  model: ModelConfig,
  values: ReadonlyMap<string, Float32Array>,
) => Promise<{ decoder: TokenDecoder; release: () => void }>;

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new UsageError(`missing ${what}\n${GENERATE_USAGE}`);
  return v;
}

function loadRun(runsDir: string, run: string): RunWeights & { dir: string } {
  const dir = join(runsDir, run);
  if (!existsSync(dir)) throw new UsageError(`run '${run}' not found: no folder ${dir} (train one with npm run train -- --run ${run})`);
  let weights: RunWeights;
  try {
    weights = readRunWeights(dir);
  } catch (e) {
    if (!(e instanceof RunWeightsNotFoundError)) throw e;
    throw new UsageError(
      `run '${run}' has no checkpoint in ${dir} (no ${CHECKPOINT_FILE}, nor the older ${LEGACY_WEIGHTS_FILES.join(' + ')}); ` +
        `training writes ${CHECKPOINT_FILE} every --checkpoint-every steps, when stopped and when it finishes`,
    );
  }
  const errs = validateModelConfig(weights.config.model);
  if (errs.length)
    throw new UsageError(`run '${run}': invalid model config in ${join(dir, configFileOf(weights))}:\n${formatConfigIssues(errs)}`);
  return { ...weights, dir };
}

/** The file a run's config came from: the checkpoint's metadata, or an older folder's config.json. */
const configFileOf = (w: RunWeights): string => (w.source === CHECKPOINT_FILE ? CHECKPOINT_FILE : 'config.json');

const show = (tok: Tokenizer, id: number): string => JSON.stringify(tok.decode([id]));

function printReads(io: CliIo, config: RunConfig, tok: Tokenizer, res: GenerateResult): boolean {
  const m = config.model;
  const lg = m.nLayers * m.nKvGroups;
  let dense = 0;
  for (const s of res.steps) dense += lg * (s.t + 1);
  const nsa = attentionNsaConfig(m);
  if (m.attention === 'dsa' && m.dsa) return printDsaReads(io, config, tok, res);
  if (!nsa) {
    io.out(
      `[reads] dense attention: query t reads t+1 keys per layer and group; ${dense} keys in all (${m.nLayers} layers × ${m.nKvGroups} groups)`,
    );
    return true;
  }
  io.out(
    `[reads] keys read per branch for each generated token's query t, summed over ${m.nLayers} layers × ${m.nKvGroups} groups, ` +
      `beside the formula ${
        m.attention === 'window' && m.window
          ? `min(w, t+1) (window alone, w=${m.window.w})`
          : m.attention === 'moba' && m.moba
            ? `Σ over its blocks of min(B, t+1−j·B) (MoBA, B=${m.moba.blockSize}, k=${m.moba.topK})`
            : `ncmp(t) + |selected positions ≤ t| + min(w, t+1) (l=${nsa.l}, d=${nsa.d}, l'=${nsa.lSel}, n=${nsa.nSel}, w=${nsa.w})`
      } and dense ${lg}·(t+1)`,
  );
  io.out(
    `${'t'.padStart(5)}  ${'token'.padEnd(8)} ${'cmp'.padStart(6)} ${'sel'.padStart(6)} ${'win'.padStart(6)} ${'read'.padStart(7)}  ${'formula'.padEnd(22)} ${'dense'.padStart(7)}  ok`,
  );
  let read = 0;
  let bad = 0;
  for (const s of res.steps) {
    const sum = { cmp: 0, sel: 0, win: 0, fc: 0, fs: 0, fw: 0 };
    let ok = true;
    for (const r of s.reads) {
      sum.cmp += r.cmp;
      sum.sel += r.sel;
      sum.win += r.win;
      sum.fc += r.formula.cmp;
      sum.fs += r.formula.sel;
      sum.fw += r.formula.win;
      if (r.cmp !== r.formula.cmp || r.sel !== r.formula.sel || r.win !== r.formula.win) ok = false;
    }
    if (!ok) bad++;
    const total = sum.cmp + sum.sel + sum.win;
    read += total;
    const formula = `${sum.fc}+${sum.fs}+${sum.fw}=${sum.fc + sum.fs + sum.fw}`;
    io.out(
      `${String(s.t).padStart(5)}  ${show(tok, s.token).padEnd(8)} ${String(sum.cmp).padStart(6)} ${String(sum.sel).padStart(6)} ${String(sum.win).padStart(6)} ` +
        `${String(total).padStart(7)}  ${formula.padEnd(22)} ${String(lg * (s.t + 1)).padStart(7)}  ${ok ? 'yes' : 'NO'}`,
    );
  }
  const pct = dense > 0 ? ((100 * read) / dense).toFixed(1) : '0';
  io.out(`[reads] total ${read} keys vs dense ${dense} (${pct}%) over ${res.steps.length} tokens`);
  if (bad) io.err(`[reads] ${bad} token(s) read a different number of keys than the formula: this is a bug`);
  else io.out(`[reads] every (token, layer, group) count equals the formula`);
  return bad === 0;
}

/**
 * DSA (docs/dsa-spec.md section 7): per generated token's query t, the main K/V rows read (summed
 * over layers and groups) beside min(k, t+1) per group, and the indexer key rows (summed over
 * layers) beside t+1 per layer.
 */
function printDsaReads(io: CliIo, config: RunConfig, tok: Tokenizer, res: GenerateResult): boolean {
  const m = config.model;
  const k = m.dsa?.topK ?? 0;
  const lg = m.nLayers * m.nKvGroups;
  io.out(
    `[reads] DSA (k=${k}, H_I=${m.dsa?.indexHeads}, d_I=${m.dsa?.indexDim}): for each generated token's query t, the main K/V rows read ` +
      `summed over ${m.nLayers} layers × ${m.nKvGroups} groups beside ${lg}·min(k, t+1), and the indexer key rows (width d_I, ` +
      `once per layer) beside ${m.nLayers}·(t+1); dense ${lg}·(t+1)`,
  );
  io.out(
    `${'t'.padStart(5)}  ${'token'.padEnd(8)} ${'main'.padStart(7)} ${'formula'.padStart(8)} ${'index'.padStart(7)} ${'formula'.padStart(8)} ${'dense'.padStart(7)}  ok`,
  );
  let read = 0;
  let dense = 0;
  let indexRead = 0;
  let bad = 0;
  for (const s of res.steps) {
    const main = s.reads.reduce((a, r) => a + r.cmp + r.sel + r.win, 0);
    const mainF = s.reads.reduce((a, r) => a + r.formula.total, 0);
    const index = s.indexReads.reduce((a, r) => a + r.read, 0);
    const indexF = s.indexReads.reduce((a, r) => a + r.formula, 0);
    const ok =
      s.reads.length === lg &&
      s.indexReads.length === m.nLayers &&
      s.reads.every((r) => r.cmp === r.formula.cmp && r.sel === r.formula.sel && r.win === r.formula.win) &&
      s.indexReads.every((r) => r.read === r.formula);
    if (!ok) bad++;
    read += main;
    indexRead += index;
    dense += lg * (s.t + 1);
    io.out(
      `${String(s.t).padStart(5)}  ${show(tok, s.token).padEnd(8)} ${String(main).padStart(7)} ${String(mainF).padStart(8)} ` +
        `${String(index).padStart(7)} ${String(indexF).padStart(8)} ${String(lg * (s.t + 1)).padStart(7)}  ${ok ? 'yes' : 'NO'}`,
    );
  }
  const pct = dense > 0 ? ((100 * read) / dense).toFixed(1) : '0';
  io.out(`[reads] total ${read} main keys vs dense ${dense} (${pct}%), and ${indexRead} indexer keys, over ${res.steps.length} tokens`);
  if (bad) io.err(`[reads] ${bad} token(s) read a different number of keys than the formula: this is a bug`);
  else io.out(`[reads] every (token, layer, group) main count and every (token, layer) indexer count equals the formula`);
  return bad === 0;
}

/** gpuDecoder: how this process gets a GPU decoder; without one only --cpu runs. */
export async function runGenerateCli(argv: readonly string[], io: CliIo, gpuDecoder?: GpuDecoderSource): Promise<number> {
  try {
    const args = parseArgs(argv, ARGS);
    if (args.flags.has('help')) {
      io.out(GENERATE_USAGE);
      return 0;
    }
    const run = need(args.flags.get('run'), '--run <run>');
    const prompt = need(args.flags.get('prompt'), '--prompt "text"');
    const opts = asUsage(() => ({
      maxTokens: intFlag(args, 'tokens') ?? 100,
      temperature: numFlag(args, 'temperature') ?? 0.8,
      topK: intFlag(args, 'top-k') ?? 40,
      topP: numFlag(args, 'top-p') ?? 1,
      seed: intFlag(args, 'seed') ?? 1,
    }));
    if (opts.maxTokens < 0) throw new UsageError(`--tokens must be ≥ 0 (got ${opts.maxTokens})`);
    if (opts.temperature < 0) throw new UsageError(`--temperature must be ≥ 0 (got ${opts.temperature})`);
    if (opts.topK < 0) throw new UsageError(`--top-k must be ≥ 0 (got ${opts.topK})`);
    if (!(opts.topP > 0 && opts.topP <= 1)) throw new UsageError(`--top-p must be in (0, 1] (got ${opts.topP})`);
    const { config, values, dir, source, stepsDone } = loadRun(args.flags.get('runs-dir') ?? 'runs', run);
    const m = config.model;
    const tok = createTokenizer(config.data.tokenizer);
    const ids = tok.encode(prompt);
    if (ids.length === 0) throw new UsageError('--prompt is empty: give at least one character');
    if (ids.length >= m.seqLen)
      throw new UsageError(
        `--prompt is ${ids.length} tokens (${tok.name} tokenizer) but run '${run}' has a context of ${m.seqLen}: at most ${m.seqLen - 1} leave room to generate`,
      );
    const tooBig = ids.find((id) => id >= m.vocabSize);
    if (tooBig !== undefined) throw new UsageError(`--prompt has token ${tooBig}, outside run '${run}''s vocabulary of ${m.vocabSize}`);
    let decoder: TokenDecoder;
    let release = () => {};
    if (args.flags.has('cpu')) decoder = cpuTokenDecoder(m, values);
    else {
      if (!gpuDecoder) throw new UsageError('this process has no GPU decoder: use --cpu');
      ({ decoder, release } = await gpuDecoder(m, values));
    }
    io.out(
      `[run] ${dir} (${source}${stepsDone === null ? '' : `, step ${stepsDone}`}): ${m.attention} attention, ${m.nLayers} layers, dim ${m.dim}, context ${m.seqLen}, ${tok.name} tokenizer; ` +
        `temperature ${opts.temperature}, top-k ${opts.topK}, top-p ${opts.topP}, seed ${opts.seed}; ${decoder.name} with KV caches`,
    );
    const t0 = performance.now();
    let res: GenerateResult;
    try {
      res = await generate(m, decoder, ids, { ...opts, vocabLimit: Math.min(m.vocabSize, tok.vocabSize) }, (x) => tok.decode(x));
    } finally {
      release();
    }
    const seconds = (performance.now() - t0) / 1000;
    io.out('');
    io.out(prompt + res.text);
    io.out('');
    io.out(
      `[generate] ${res.tokens.length} tokens after a ${ids.length}-token prompt, stopped by ${res.stop === 'tokens' ? '--tokens' : 'the context length'}; ` +
        `${seconds.toFixed(2)} s (${((ids.length + res.tokens.length) / Math.max(seconds, 1e-9)).toFixed(1)} tokens/s incl. prefill)`,
    );
    return printReads(io, config, tok, res) ? 0 : 1;
  } catch (e) {
    io.err(e instanceof Error ? e.message : String(e));
    return isUserError(e) ? 2 : 1;
  }
}
