#!/usr/bin/env node
// Random command lines against every CLI, as an adversarial user would type them (issue 22's
// campaign): each case holds at least one thing the CLI must refuse — an unknown or mistyped flag, a
// bad value (empty, NaN, ±Inf, 1e400, hex, a fraction for an integer, a negative count, full-width
// digits, control characters, 10 000 characters, another flag), a stray positional, a value flag
// twice, a boolean given a value — beside up to two well-formed flags. A case passes when the CLI
// exits 2 within the time limit, prints a message that names the flag or the value it refused, no
// stack trace and no raw control character, and did no GPU work. It runs with no adapter to be had
// (NSA_GPU=hardware, no driver): a case whose planted value is legitimate for its flag (`--out
// -Infinity` is a file name) passes every check and stops at the adapter, and is listed as
// accepted, for a reader to confirm. Run:
//   node scripts/campaigns/argv-fuzz.mjs [--cases 500] [--seed 1] [--jobs 2] [--out FILE]
// Prints one JSON line per failure and a summary; exits 1 if any case failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIS = ['train', 'generate', 'eval-recall', 'compare', 'bench', 'bench-nsa', 'gpu-adapter', 'train-golden', 'export'];
const TIMEOUT_MS = 90_000;

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
const CASES = Number(option('cases', '500'));
const SEED = Number(option('seed', '1'));
const JOBS = Number(option('jobs', '2'));
const OUT = option('out', undefined);

// mulberry32: the same cases for the same seed.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const r = rng(SEED);
const pick = (xs) => xs[Math.floor(r() * xs.length)];

function run(cli, args) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/run-node.mjs', `src/cli/${cli}.ts`, ...args], {
      // No adapter at all: a case that passes every check ends at the adapter, at once, instead of
      // training or benchmarking for minutes; it is listed as accepted for review.
      env: { ...process.env, NSA_GPU: 'hardware', VK_DRIVER_FILES: '/nonexistent.json', NO_COLOR: '1' },
      // Its own process group, killed whole on a timeout: run-node.mjs starts the CLI as a child.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid, 'SIGKILL');
    }, TIMEOUT_MS);
    child.stdout.on('data', (d) => (stdout += d.toString()));
    child.stderr.on('data', (d) => (stderr += d.toString()));
    // 'close', not 'exit': after the output pipes are drained.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut, ms: Math.round(performance.now() - t0) });
    });
  });
}

// Each CLI's flags, from its own --help usage: `[--name VALUE]` is a value flag, `[--name]` a
// boolean; outside brackets `--name DIR` or `--name runs/<run>` (a placeholder) is a value flag.
async function flagsOf(cli) {
  const h = await run(cli, ['--help']);
  if (h.code !== 0) throw new Error(`${cli} --help exited ${h.code}: ${h.stderr}`);
  const text = h.stdout + h.stderr;
  const values = new Set();
  const booleans = new Set();
  for (const m of text.matchAll(/\[--([a-z][a-z0-9-]*)([ =][^\]]*)?\]/g)) {
    if (m[1] === 'help') continue;
    (m[2] && m[2].trim() ? values : booleans).add(m[1]);
  }
  for (const m of text.matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)[ =]([A-Z][A-Z_]*\b|\S*<[^>]+>\S*)/gm)) values.add(m[1]);
  for (const v of values) booleans.delete(v);
  booleans.delete('help');
  return { values: [...values], booleans: [...booleans] };
}

const PLAUSIBLE = ['1', '2', '16', '0.001', 'tiny', 'nsa', 'dense', 'random'];
const BAD_VALUES = [
  ['empty', ''],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['-Infinity', '-Infinity'],
  ['1e400', '1e400'],
  ['hex', '0x10'],
  ['fraction', '1.5'],
  ['negative', '-3'],
  ['full-width digits', '１２'],
  ['escape sequence', '\x1b[31mred\x1b[0m'],
  ['carriage return', 'a\rb'],
  ['10 000 characters', 'x'.repeat(10_000)],
  ['another flag', '--steps'],
  ['2^60', '1152921504606846976'],
  ['a path outside', '../../../../etc/passwd'],
];

function mutateName(name) {
  const i = Math.floor(r() * (name.length + 1));
  const kind = pick(['insert', 'delete', 'swap', 'case', 'underscore']);
  if (kind === 'insert') return name.slice(0, i) + pick(['x', 'e', 's', '-']) + name.slice(i);
  if (kind === 'delete' && name.length > 2) return name.slice(0, Math.max(1, i - 1)) + name.slice(Math.max(1, i));
  if (kind === 'swap' && name.length > 2) {
    const j = Math.min(name.length - 2, i);
    return name.slice(0, j) + name[j + 1] + name[j] + name.slice(j + 2);
  }
  if (kind === 'case') return name.toUpperCase();
  return name.replaceAll('-', '_') + (name.includes('-') ? '' : '_');
}

// One case: [cli, argv, what is wrong, the token the message must name].
function makeCase(cli, f) {
  const argv = [];
  const good = Math.floor(r() * 3);
  const used = new Set();
  for (let k = 0; k < good && f.values.length; k++) {
    const name = pick(f.values);
    if (used.has(name)) continue;
    used.add(name);
    argv.push(`--${name}`, pick(PLAUSIBLE));
  }
  const kinds = ['unknown', 'bad-value', 'positional', 'twice', 'boolean-value'];
  let kind = pick(kinds);
  if ((kind === 'bad-value' || kind === 'twice') && !f.values.length) kind = 'unknown';
  if (kind === 'boolean-value' && !f.booleans.length) kind = 'unknown';
  let bad;
  let names;
  if (kind === 'unknown') {
    let name = mutateName(pick([...f.values, ...f.booleans, 'steps', 'seed']));
    if (f.values.includes(name) || f.booleans.includes(name) || name === 'help') name = `${name}-zz`;
    bad = [`--${name}`, pick(PLAUSIBLE)];
    names = [name];
  } else if (kind === 'bad-value') {
    const name = pick(f.values.filter((n) => !used.has(n)).concat(f.values));
    const [what, value] = pick(BAD_VALUES);
    kind = `bad-value (${what})`;
    bad = r() < 0.5 ? [`--${name}`, value] : [`--${name}=${value}`];
    names = [name, value.slice(0, 40)];
  } else if (kind === 'positional') {
    const token = pick(['stray', '5', 'x=y', '-', '--']);
    bad = [token];
    names = [token];
  } else if (kind === 'twice') {
    const name = pick(f.values);
    bad = [`--${name}`, '1', `--${name}`, '2'];
    names = [name];
  } else {
    const name = pick(f.booleans);
    bad = [`--${name}=${pick(['yes', '2', '', 'maybe'])}`];
    names = [name];
  }
  const at = Math.floor(r() * (argv.length / 2 + 1)) * 2;
  argv.splice(at, 0, ...bad);
  return { cli, argv, kind, names };
}

const reachedAdapter = (res) => /gave no WebGPU adapter|No WebGPU adapter/.test(res.stderr);

function judge(c, res) {
  const problems = [];
  const text = res.stdout + res.stderr;
  if (reachedAdapter(res)) return problems; // accepted: every check passed (listed for review)
  if (res.timedOut) problems.push(`no answer in ${TIMEOUT_MS / 1000} s (a hang)`);
  else if (res.code !== 2) problems.push(`exit ${res.code ?? res.signal} instead of 2`);
  if (/\n\s+at .+:\d+:\d+\)?\n/.test(text)) problems.push('a stack trace');

  if (/[\x00-\x08\x0b-\x1f\x7f]/.test(text.replace(/\r?\n/g, ''))) problems.push('a raw control character');
  if (/\[gpu\]/.test(text)) problems.push('GPU work before the refusal');
  // The CLI reports the first thing it refuses, which may be another token of the case than the
  // planted one (a plausible value can be wrong for its flag): the message must name a flag or a
  // value of this command line, or a flag the command needs.
  const firstLines = res.stderr.split('\n').slice(0, 4).join('\n');
  const tokens = c.argv.flatMap((a) => a.replace(/^-+/, '').split('=')).filter((t) => t.length >= 2);
  const named =
    tokens.some((t) => firstLines.includes(t.slice(0, 40)) || firstLines.includes(JSON.stringify(t.slice(0, 40)).slice(1, -1))) ||
    c.argv.some((a) => firstLines.includes(`'${a.slice(0, 40)}`)) ||
    /(^|\s)--[a-z]/.test(firstLines) ||
    (c.kind === 'positional' && /argument|run folder|checkpoint/.test(firstLines));
  if (!res.timedOut && !named) problems.push('the message names no flag or value of the command line');
  if (!res.timedOut && res.stderr.trim() === '') problems.push('no message');
  return problems;
}

async function main() {
  const flags = {};
  for (const cli of CLIS) flags[cli] = await flagsOf(cli);
  const cases = Array.from({ length: CASES }, (_, i) => makeCase(CLIS[i % CLIS.length], flags[CLIS[i % CLIS.length]]));
  const scratch = mkdtempSync(join(tmpdir(), 'nsa-argv-fuzz-'));
  const failures = [];
  const accepted = [];
  const byKind = {};
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  async function worker() {
    while (next < cases.length) {
      const c = cases[next++];
      const res = await run(c.cli, c.argv);
      const problems = judge(c, res);
      if (reachedAdapter(res)) accepted.push({ cli: c.cli, argv: c.argv.map((a) => a.slice(0, 60)), kind: c.kind });
      const k = c.kind.replace(/ \(.*/, '');
      byKind[k] = byKind[k] ?? { cases: 0, failed: 0 };
      byKind[k].cases++;
      if (problems.length) {
        byKind[k].failed++;
        const f = {
          cli: c.cli,
          argv: c.argv.map((a) => (a.length > 60 ? `${a.slice(0, 60)}…(${a.length})` : a)),
          kind: c.kind,
          problems,
          exit: res.code,
          stderr: res.stderr.slice(0, 300),
        };
        failures.push(f);
        console.log(JSON.stringify(f));
      }
      done++;
      if (done % 50 === 0)
        console.error(`[argv-fuzz] ${done}/${cases.length}, ${failures.length} failed, ${Math.round((performance.now() - t0) / 1000)} s`);
    }
  }
  await Promise.all(Array.from({ length: JOBS }, worker));
  rmSync(scratch, { recursive: true, force: true });
  for (const a of accepted) console.log(JSON.stringify({ accepted: a }));
  const summary = {
    kind: 'summary',
    cases: cases.length,
    failed: failures.length,
    accepted: accepted.length,
    seed: SEED,
    seconds: Math.round((performance.now() - t0) / 1000),
    byKind,
    clis: CLIS,
  };
  console.log(JSON.stringify(summary));
  if (OUT) writeFileSync(OUT, `${JSON.stringify({ summary, failures, accepted }, null, 1)}\n`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
