#!/usr/bin/env node
// The offline GPU bundle's summary: reads what run.sh wrote to OUTDIR and the step table, prints one
// JSON object on stdout (summary.json) and a readable table on stderr.
// Usage: node scripts/gpu/summarize.mjs OUTDIR STEPS_TSV
// Plain JavaScript (no TypeScript loader) so it runs even when the app's steps failed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function readJson(file) {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return { unreadable: `${file}: ${e.message}` };
  }
}

/** The JSON objects of a JSON-lines file (other lines, e.g. log text, are skipped). */
export function readJsonLines(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

export function readSteps(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, exit, seconds] = l.split('\t');
      // 'skipped': run.sh's BUDGET had no time left for the step; exit 124: cut at its cap.
      if (exit === 'skipped') return { name, exit: null, seconds: 0, skipped: true };
      return { name, exit: Number(exit), seconds: Number(seconds), ...(exit === '124' ? { cut: true } : {}) };
    });
}

/** Vitest's JSON report reduced to counts and the names of failed tests. */
export function testCounts(report) {
  if (!report || report.unreadable) return report;
  const failed = (report.testResults ?? []).flatMap((f) =>
    (f.assertionResults ?? []).filter((a) => a.status === 'failed').map((a) => `${f.name.replace(/^.*\/app\//, '')}: ${a.fullName}`),
  );
  return {
    files: (report.testResults ?? []).length,
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
    total: report.numTotalTests,
    failed_tests: failed,
  };
}

const round = (x, digits = 3) => (typeof x === 'number' ? +x.toPrecision(digits) : x);

/**
 * The learn step's learn.jsonl (scripts/gpu/learn.sh: every run's lines, appended as they came)
 * reduced to one row per (preset, mechanism, variant: `npm run learn --variant`, absent from a
 * row without one): the best held-out answer accuracy over its
 * evaluations (so a run cut at its cap still counts what it reached), the whole-sequence accuracy,
 * the accuracy of each sequence's j-th answer (passkey: digit j), the routing of its answers (needle: src/train/eval/needle-read.ts)
 * and step of that evaluation, the last step evaluated and the steps per second up to it
 * (evaluations included: the rate a follow-up call is sized by), whether it reached the target, its keys
 * read per query (at the last query and the mean over positions, by the run's config) against
 * dense attention's (T and (T + 1)/2), NSA's as its forward kernels counted them (keys_counted_query:
 * the mean over the run's steps from its `run` line, or for a run cut before it, the count of the
 * step before its last evaluation; keys_counted_vs_dense), and the process's exit and seconds. Null
 * without the file.
 */
export function learnRows(lines) {
  if (!lines.length) return null;
  const rows = new Map();
  const seqLen = new Map(); // preset → T, from its grid line
  const row = (preset, mechanism, variant) => {
    const key = `${preset}/${mechanism}/${variant ?? ''}`;
    if (!rows.has(key))
      rows.set(key, {
        preset,
        mechanism,
        ...(variant != null && { variant }),
        accuracy: null,
        sequence_accuracy: null,
        accuracy_by_answer: null,
        whole_keys_by_depth: null,
        needle: null,
        best_step: null,
        last_step: 0,
        steps_per_s: null,
        steps_planned: null,
        target: null,
        reached: false,
        chance: null,
        keys_last_query: null,
        keys_mean_query: null,
        keys_mean_vs_dense: null,
        keys_counted_query: null,
        keys_counted_vs_dense: null,
        exit: null,
        seconds: null,
        cut: false,
      });
    return rows.get(key);
  };
  for (const l of lines) {
    if (l.kind === 'grid') {
      for (const m of l.mechanisms ?? []) {
        const r = row(l.preset, m, l.variant);
        const k = l.keys_per_query?.[m];
        Object.assign(r, { steps_planned: l.steps, target: l.target, chance: round(l.chance) });
        seqLen.set(l.preset, l.seqLen);
        if (k) {
          Object.assign(r, { keys_last_query: k.last_query, keys_mean_query: round(k.mean, 4) });
          r.keys_mean_vs_dense = round(k.mean / ((l.seqLen + 1) / 2));
        }
      }
    } else if (l.kind === 'eval') {
      const r = row(l.preset, l.mechanism, l.variant);
      if (l.step >= r.last_step) {
        r.last_step = l.step;
        if (l.seconds > 0) r.steps_per_s = round(l.step / l.seconds);
      }
      if (r.accuracy === null || l.accuracy > r.accuracy) {
        Object.assign(r, {
          accuracy: round(l.accuracy, 4),
          sequence_accuracy: round(l.sequence_accuracy, 4),
          accuracy_by_answer: l.accuracy_by_answer?.map((a) => round(a, 3)) ?? null,
          // A passkey's: per range of needle positions, its held-out keys and the share right.
          whole_keys_by_depth:
            l.accuracy_by_depth?.map((d) => ({
              positions: d.positions,
              sequences: d.sequences,
              whole_keys: d.whole_keys == null ? null : round(d.whole_keys, 3),
            })) ?? null,
          // NSA, MoBA, DSA: the answers whose source some layer selected, and the accuracy on each side.
          needle: l.needle
            ? {
                selected_any: round(l.needle.selected_any, 3),
                selected_by_layer: l.needle.selected_by_layer.map((v) => round(v, 3)),
                accuracy_selected: round(l.needle.accuracy_selected, 3),
                accuracy_missed: round(l.needle.accuracy_missed, 3),
              }
            : null,
          best_step: l.step,
        });
      }
      if (r.target !== null && l.accuracy >= r.target) r.reached = true;
      // NSA: the forward kernels' count on the step before this evaluation (all branches).
      const c = l.keys_counted;
      if (c && l.step >= r.last_step) r.keys_counted_query = round(c.cmp + c.sel + c.win, 4);
    } else if (l.kind === 'run' && l.keys_counted_mean_query != null) {
      // The run's end: the mean over all its steps replaces the last evaluation's count.
      row(l.preset, l.mechanism, l.variant).keys_counted_query = round(l.keys_counted_mean_query, 4);
    } else if (l.kind === 'process') {
      Object.assign(row(l.preset, l.mechanism, l.variant), { exit: l.exit, seconds: l.seconds, cut: l.cut === true });
    }
  }
  for (const r of rows.values()) {
    const T = seqLen.get(r.preset);
    if (r.keys_counted_query !== null && T) r.keys_counted_vs_dense = round(r.keys_counted_query / ((T + 1) / 2));
  }
  return [...rows.values()];
}

export function summarize(outdir, stepsFile) {
  const adapter = readJson(join(outdir, 'adapter.json'));
  const bench = readJsonLines(join(outdir, 'bench.jsonl'));
  const nsa = readJsonLines(join(outdir, 'bench-nsa.jsonl'));
  const golden = readJson(join(outdir, 'golden.json'));
  const torch = readJson(join(outdir, 'torch.json'));
  const torchRows = torch?.results ?? [];
  const learn = learnRows(readJsonLines(join(outdir, 'learn.jsonl')));
  return {
    adapter: adapter?.summary ?? adapter,
    fp32_peak: adapter?.fp32_peak ?? null,
    steps: readSteps(stepsFile),
    tests: testCounts(readJson(join(outdir, 'gpu-tests.json'))),
    matmul: bench
      .filter((l) => l.kind === 'matmul')
      .map((l) => ({ size: `${l.M}x${l.N}x${l.K}`, gflops: round(l.gflops), mfu: round(l.mfu) })),
    dispatch_us: round(bench.find((l) => l.kind === 'dispatch')?.us_per_dispatch) ?? null,
    presets: bench
      .filter((l) => l.kind === 'preset')
      .map((l) => {
        // One row per (preset, attention, batch size): npm run bench's name@B times a preset at another batch.
        const same = (r) => r.preset === l.preset && r.attention === l.attention && (r.batch_size ?? l.batch_size) === l.batch_size;
        const kernels = bench.find((k) => k.kind === 'kernels' && same(k));
        const torchFor = (mode) => torchRows.find((r) => same(r) && r.mode === mode);
        return {
          preset: l.preset,
          attention: l.attention,
          batch_size: l.batch_size,
          tokens_per_s: round(l.tokens_per_s),
          ms_per_step: round(l.ms_per_step),
          mfu: round(l.mfu),
          torch_eager_tokens_per_s: round(torchFor('eager')?.tokens_per_s),
          torch_sdpa_tokens_per_s: round(torchFor('sdpa')?.tokens_per_s),
          torch_nsa_playground_tokens_per_s: round(torchFor('nsa_playground')?.tokens_per_s),
          top_kernels: kernels?.kernels?.slice(0, 5).map((k) => `${k.kernel} ${round(k.share * 100, 2)}%`),
        };
      }),
    nsa_vs_dense: nsa
      .filter((l) => l.kind === 'nsa_vs_dense')
      .map((l) => ({
        T: l.T,
        dense_ms: round(l.dense_ms),
        nsa_ms: round(l.nsa_ms),
        time_ratio: round(l.nsa_over_dense_time),
        keys_ratio: round(l.nsa_over_dense_keys),
      })),
    decode: nsa
      .filter((l) => l.kind === 'decode')
      .map((l) => ({
        T: l.T,
        nsa_ms_per_token: round(l.nsa_ms),
        dense_ms_per_token: round(l.dense_ms),
        nsa_attention_ms: round(l.nsa_attention_ms),
        dense_attention_ms: round(l.dense_attention_ms),
        keys_ratio: round(l.nsa_over_dense_keys),
        reads_match_formula: l.reads_match_formula,
      })),
    nsa_summary: nsa.find((l) => l.kind === 'summary') ?? null,
    // A golden recorded in this run (a new adapter) checked nothing: it is 'recorded, unchecked',
    // never a pass, and the golden step says so.
    golden:
      golden?.results?.map((r) => ({
        key: r.key,
        outcome: r.outcome === 'recorded' ? 'recorded, unchecked' : r.outcome,
        problems: r.problems,
      })) ?? golden,
    torch: torch?.skipped ? { skipped: torch.skipped } : (torch?.environment ?? null),
    ...(learn ? { learn } : {}),
  };
}

export function table(s) {
  const lines = [`adapter: ${typeof s.adapter === 'string' ? s.adapter : JSON.stringify(s.adapter)}`];
  const unchecked = (s.golden ?? []).filter?.((g) => g.outcome === 'recorded, unchecked').length ?? 0;
  const status = (st) =>
    st.skipped
      ? 'skipped (no time left)'
      : st.cut
        ? 'CUT at its time cap (partial results kept)'
        : st.exit !== 0
          ? `FAILED (exit ${st.exit})`
          : st.name === 'golden' && unchecked > 0
            ? `recorded ${unchecked}, unchecked`
            : 'ok';
  for (const st of s.steps) lines.push(`  step ${st.name}: ${status(st)} in ${st.seconds} s`);
  if (s.tests) lines.push(`tests: ${s.tests.passed} passed, ${s.tests.failed} failed (${s.tests.files} files)`);
  for (const m of s.matmul) lines.push(`matmul ${m.size}: ${m.gflops} GFLOP/s${m.mfu != null ? `, MFU ${m.mfu}` : ''}`);
  if (s.dispatch_us != null) lines.push(`one dispatch (in a chain of dependent ones): ${s.dispatch_us} µs (npm run gpu:plan assumes 2 µs)`);
  for (const p of s.presets)
    lines.push(
      `${p.preset} ${p.attention}${p.batch_size != null ? ` B=${p.batch_size}` : ''}: ${p.tokens_per_s} tokens/s, ${p.ms_per_step} ms/step` +
        (p.mfu != null ? `, MFU ${p.mfu}` : '') +
        (p.torch_eager_tokens_per_s != null
          ? `; PyTorch eager ${p.torch_eager_tokens_per_s}, SDPA ${p.torch_sdpa_tokens_per_s ?? '-'}`
          : '') +
        (p.torch_nsa_playground_tokens_per_s != null ? `; python/nsa_playground ${p.torch_nsa_playground_tokens_per_s} tokens/s` : ''),
    );
  for (const r of s.nsa_vs_dense)
    lines.push(`NSA vs dense T=${r.T}: ${r.nsa_ms} vs ${r.dense_ms} ms (×${r.time_ratio}), keys ×${r.keys_ratio}`);
  for (const r of s.decode)
    lines.push(
      `decode T=${r.T}: NSA ${r.nsa_ms_per_token} vs dense ${r.dense_ms_per_token} ms/token (attention ${r.nsa_attention_ms} vs ${r.dense_attention_ms}), keys ×${r.keys_ratio}${r.reads_match_formula ? '' : ', READS ≠ FORMULA'}`,
    );
  for (const g of s.golden ?? []) lines.push(`golden ${g.key}: ${g.outcome}`);
  const pct = (x) => (x == null ? '-' : `${(100 * x).toFixed(1)} %`);
  for (const r of s.learn ?? [])
    lines.push(
      `learn ${r.preset} ${r.mechanism}${r.variant ? ` [${r.variant}]` : ''}: ${pct(r.accuracy)} (whole sequences ${pct(r.sequence_accuracy)}` +
        // A passkey's digits (a few answers a sequence; MQAR's 16–64 stay in the JSON).
        (r.accuracy_by_answer && r.accuracy_by_answer.length <= 8 ? `; by answer ${r.accuracy_by_answer.map(pct).join(' / ')}` : '') +
        (r.whole_keys_by_depth
          ? `; whole keys by needle position ${r.whole_keys_by_depth.map((d) => `${d.positions[0]}–${d.positions[1]} ${pct(d.whole_keys)}`).join(', ')}`
          : '') +
        (r.needle
          ? `; needle selected ${pct(r.needle.selected_any)} (accuracy ${pct(r.needle.accuracy_selected)} where selected, ${pct(r.needle.accuracy_missed)} where not)`
          : '') +
        `) at step ${r.best_step ?? '-'}` +
        ` of ${r.last_step} evaluated (${r.steps_planned ?? '?'} planned; ${r.steps_per_s ?? '-'} steps/s), target ${pct(r.target)} ${r.reached ? 'reached' : 'not reached'}` +
        `, keys/query ${r.keys_mean_query ?? '-'} (${r.keys_mean_vs_dense ?? '-'} × dense)` +
        (r.keys_counted_query == null ? '' : `, counted by the kernels ${r.keys_counted_query} (${r.keys_counted_vs_dense} × dense)`) +
        (r.exit == null ? ', no exit recorded' : `, exit ${r.exit}${r.cut ? ' (cut at its cap)' : ''} in ${r.seconds} s`),
    );
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const [outdir, stepsFile] = process.argv.slice(2);
  if (!outdir) {
    console.error('usage: node scripts/gpu/summarize.mjs OUTDIR STEPS_TSV');
    process.exit(2);
  }
  const s = summarize(outdir, stepsFile ?? '');
  console.log(JSON.stringify(s, null, 2));
  console.error(table(s));
}
