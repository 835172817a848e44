#!/usr/bin/env node
// `npm test`: everything CI checks, in the order that fails soonest, with each step's time.
//
//   1. side by side:
//      scripts/ensure-test-env.mjs  installs what the tests need (Debian chromium, python3-torch,
//                                   the ruff venv) and writes the corpus; then the Hugging Face venv
//                                   (.venv-hf/), the static build the e2e suite serves (vite build;
//                                   Playwright then only previews it) and ruff
//      eslint, typecheck, prettier  two at a time: they need only node_modules
//   2. side by side:
//      vitest --project gpu          kernels and models on Dawn (SwiftShader), the learning check
//      vitest --project fast         in process, CPU only (its output printed when it ends)
//   3. side by side:
//      vitest --project integration  CLIs, scripts, torchrun and python as child processes, in two
//                                    lanes (two vitest processes, each a half of the tier's files)
//      playwright test               the page in headless Chromium, WebGPU on SwiftShader
//
// The GPU tier alone keeps about 1.5 cores busy (at 483e181: 256 s of CPU in 188 s; many of its
// dispatches are too small for SwiftShader to spread), so the fast tier's 46 s run beside it. The
// three of step 3 do not fill the cores alone either (the integration tier waits on
// process start-ups, torchrun's rendezvous and pytest's fault timeouts; the e2e suite on pages
// loading and its own timers), so they share the cores: at c1f6884 the pair took 470 s side by
// side (integration 470 s, Playwright 351 s); at 7f168f3, with fewer tests, one after the other
// they took 235 s and 254 s. Neither asserts a wall-clock time a shared core could miss (hang
// guards and report-only figures), and their files and ports are disjoint. At 6c9436d the pair took
// 542 s (Playwright 393 s), the machine busy 99 % until Playwright ended, then 40–90 % for the
// integration tier's last 150 s alone: hence its two lanes. The cores are the limit, not the order:
// at 3b84c3f the GPU step took 225 s and the last 443 s (python lane; cli 409, Playwright 407), 12.5
// min in all; with the python lane started beside the GPU tier when the fast tier ended (tried at
// 49d9913), the GPU tier took 303 s and the python lane 165, the last step 365 s: 12.5 min again.
//
// The learning tier (npm run test:learning) is not part of it. A failing step stops the run; the
// closing table gives every step's time, also written to build/test-times.json.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const npx = (...args) => ['npx', args];
const npm = (...args) => ['npm', args];

const STATIC = [
  ['typecheck', npm('run', '--silent', 'typecheck')],
  ['eslint', npm('run', '--silent', 'lint')],
  ['prettier', npm('run', '--silent', 'format:check')],
  ['ruff', npm('run', '--silent', 'lint:python')],
  ['vite build', npx('vite', 'build', '--logLevel', 'warn')],
];

const GPU_TIER = ['vitest gpu', npx('vitest', 'run', '--project', 'gpu')];
const FAST_TIER = ['vitest fast', npx('vitest', 'run', '--project', 'fast')];
// Side by side (see the header), the integration tier in two lanes, each printed when it ends: the
// files that run python (the export's PyTorch side, torchrun, pytest, Hugging Face, the learn
// engines' parity) and the rest (the CLIs' kill/resume, run folders, watchdogs, the bundle scripts).
// About equal halves (250 s each under load at 6c9436d); one lane alone left a core idle for the
// last ~150 s, after Playwright ended. With .venv-hf byte-compiled (483e181) the python files take
// about 82 s alone and the rest 172 s, pytest's run (46 s) among them: it moved to the python lane.
const PYTHON_LANE = (f) => f.startsWith('tests/export/') || f.startsWith('tests/dsa/') || f === 'tests/cli/learn.integration.test.ts';

/** Every *.integration.test.ts under tests/ (the integration tier's glob), repository-relative. */
function integrationFiles(dir = 'tests') {
  return readdirSync(resolve(root, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory()) return integrationFiles(path);
    return e.name.endsWith('.integration.test.ts') ? [path] : [];
  });
}

function integrationLanes() {
  const files = integrationFiles().sort();
  const lane = (name, picked) => [name, npx('vitest', 'run', '--project', 'integration', ...picked)];
  return [
    lane('integration (python)', files.filter(PYTHON_LANE)),
    lane(
      'integration (cli)',
      files.filter((f) => !PYTHON_LANE(f)),
    ),
  ];
}
// The build above is what Playwright serves (playwright.config.ts: NSA_E2E_PREBUILT).
const PLAYWRIGHT = ['playwright', npx('playwright', 'test'), { NSA_E2E_PREBUILT: '1' }];

const times = [];
const started = performance.now();

/** Runs one step; `buffered` keeps its output until it ends (steps that run side by side). */
function run(name, [cmd, args], env = {}, buffered = false) {
  const t0 = performance.now();
  return new Promise((done) => {
    const child = spawn(cmd, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    });
    const out = [];
    if (buffered) for (const s of [child.stdout, child.stderr]) s.on('data', (d) => out.push(d));
    child.on('error', (e) => out.push(Buffer.from(`${cmd} could not start: ${e.message}\n`)));
    child.on('close', (code, signal) => {
      const seconds = (performance.now() - t0) / 1000;
      const ok = code === 0;
      times.push({ step: name, seconds: Math.round(seconds * 10) / 10, ok });
      if (buffered) {
        const text = Buffer.concat(out).toString('utf8').trimEnd();
        console.log(
          `\n── ${name}: ${ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds.toFixed(1)} s${text ? '\n' + text : ''}`,
        );
      } else console.log(`\n── ${name}: ${ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`} in ${seconds.toFixed(1)} s`);
      done(ok);
    });
  });
}

/** Runs the steps at most `slots` at a time; resolves to whether all passed. */
async function parallel(steps, slots) {
  const queue = [...steps];
  let allOk = true;
  const lane = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) allOk = (await run(s[0], s[1], {}, true)) && allOk;
  };
  await Promise.all(Array.from({ length: slots }, lane));
  return allOk;
}

function report(ok) {
  const total = (performance.now() - started) / 1000;
  const rows = times.map((t) => `  ${t.step.padEnd(20)} ${t.seconds.toFixed(1).padStart(7)} s${t.ok ? '' : '  FAILED'}`);
  console.log(`\nnpm test ${ok ? 'passed' : 'FAILED'} in ${(total / 60).toFixed(1)} min:\n${rows.join('\n')}`);
  mkdirSync(resolve(root, 'build'), { recursive: true });
  writeFileSync(
    resolve(root, 'build/test-times.json'),
    JSON.stringify({ date: new Date().toISOString(), ok, totalSeconds: Math.round(total), steps: times }, null, 2) + '\n',
  );
  process.exit(ok ? 0 : 1);
}

async function main() {
  // On a fresh machine ensure-test-env is mostly apt (dpkg unpacking chromium and torch: about 100 s
  // on one core, 2026-11-29) and pip: the checks that need only node_modules run beside it, two at
  // a time, the longest first (eslint's type-aware rules). The static build (it copies the corpus),
  // ruff (in .venv-lint) and the Hugging Face venv (.venv-lint's pip fills it) wait for it.
  const nodeOnly = ['eslint', 'typecheck', 'prettier'];
  const byName = (names) => names.map((n) => STATIC.find((s) => s[0] === n));
  const afterEnv = async () => {
    if (!(await run('ensure-test-env', ['node', ['scripts/ensure-test-env.mjs', '--skip-hf-venv']]))) return false;
    const [venvOk, staticOk] = await Promise.all([
      run('hf venv', ['node', ['scripts/ensure-test-env.mjs', '--hf-venv-only']], {}, true),
      parallel(byName(['vite build', 'ruff']), 1),
    ]);
    return venvOk && staticOk;
  };
  const [envOk, staticOk] = await Promise.all([afterEnv(), parallel(byName(nodeOnly), 2)]);
  if (!envOk || !staticOk) report(false);
  const [gpuOk, fastOk] = await Promise.all([run(GPU_TIER[0], GPU_TIER[1]), run(FAST_TIER[0], FAST_TIER[1], {}, true)]);
  if (!gpuOk || !fastOk) report(false);
  const [pythonOk, cliOk, playwrightOk] = await Promise.all([
    ...integrationLanes().map(([name, cmd]) => run(name, cmd, {}, true)),
    run(PLAYWRIGHT[0], PLAYWRIGHT[1], PLAYWRIGHT[2]),
  ]);
  report(pythonOk && cliOk && playwrightOk);
}

await main();
