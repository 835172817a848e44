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
//      vitest --project fast         in process, CPU only (its output printed when it ends), then
//                                    the integration tier's python lane (below) in its place
//   3. side by side, when the GPU tier ends:
//      vitest --project integration  CLIs, scripts, torchrun and python as child processes, in two
//                                    lanes (two vitest processes, each a half of the tier's files;
//                                    the python lane started in step 2)
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
// By 2026-11-29 this machine and CI ran about 1.6 times slower, and the suite had grown: at 3671c8a
// the GPU tier took 450 s beside the fast tier's 119 s (the GPU tier alone keeps 1.2 cores busy),
// then the last step 650 s with all three lanes in it (20.6 min on a fresh clone here). With the
// python lane beside the GPU tier again (db405b7, the same machine an hour later): python lane 254 s,
// GPU tier 497 s, then cli 398 s and Playwright 486 s: 18.7 min, the machine 95 % busy over the run
// (each step's row gives how busy it was while the step ran; the GPU step 90 %), so what is left
// to cut is CPU, not order. Moving two CLI files (the device call's rehearsal, the non-finite stop)
// from the cli lane to the python lane (da12d98, reverted) made it 19.6 min: the GPU tier took 550 s
// beside a longer python lane, and Playwright, the last step's longest, took the same 487 s.
//
// The learning tier (npm run test:learning) is not part of it. A failing step stops the run; the
// closing table gives every step's time, also written to build/test-times.json.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
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
const cpuAtStart = machineCpu();

/**
 * The machine's CPU counters (Linux /proc/stat: busy and total jiffies over all cores), or null
 * elsewhere. Each step's row says how busy the whole machine was while it ran: a step beside idle
 * cores can take more work beside it, one at 100 % cannot (the order then does not matter).
 */
function machineCpu() {
  try {
    const [, ...f] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is counted in user already
    return { busy: total - f[3] - (f[4] ?? 0), total }; // idle and iowait are not busy
  } catch {
    return null;
  }
}
const busyPercent = (a, b) => (a && b && b.total > a.total ? Math.round((100 * (b.busy - a.busy)) / (b.total - a.total)) : null);

/** Runs one step; `buffered` keeps its output until it ends (steps that run side by side). */
function run(name, [cmd, args], env = {}, buffered = false) {
  const t0 = performance.now();
  const cpu0 = machineCpu();
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
      times.push({ step: name, seconds: Math.round(seconds * 10) / 10, ok, machineBusyPercent: busyPercent(cpu0, machineCpu()) });
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
  const busy = (p) => (p === null ? '' : `  machine ${String(p).padStart(3)} % busy`);
  const rows = times.map(
    (t) => `  ${t.step.padEnd(20)} ${t.seconds.toFixed(1).padStart(7)} s${busy(t.machineBusyPercent)}${t.ok ? '' : '  FAILED'}`,
  );
  const whole = busyPercent(cpuAtStart, machineCpu());
  console.log(
    `\nnpm test ${ok ? 'passed' : 'FAILED'} in ${(total / 60).toFixed(1)} min${whole === null ? '' : `, machine ${whole} % busy`}:\n${rows.join('\n')}`,
  );
  mkdirSync(resolve(root, 'build'), { recursive: true });
  writeFileSync(
    resolve(root, 'build/test-times.json'),
    JSON.stringify(
      { date: new Date().toISOString(), ok, totalSeconds: Math.round(total), machineBusyPercent: whole, steps: times },
      null,
      2,
    ) + '\n',
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
  // The integration tier's python lane starts when the fast tier ends, in the core the GPU tier
  // leaves idle (see the header); the cli lane and Playwright when the GPU tier ends.
  const [pythonLane, cliLane] = integrationLanes();
  const fast = run(FAST_TIER[0], FAST_TIER[1], {}, true);
  const python = fast.then((ok) => ok && run(pythonLane[0], pythonLane[1], {}, true));
  const [gpuOk, fastOk] = await Promise.all([run(GPU_TIER[0], GPU_TIER[1]), fast]);
  if (!gpuOk || !fastOk) {
    await python; // its output before the table
    report(false);
  }
  const [pythonOk, cliOk, playwrightOk] = await Promise.all([
    python,
    run(cliLane[0], cliLane[1], {}, true),
    run(PLAYWRIGHT[0], PLAYWRIGHT[1], PLAYWRIGHT[2]),
  ]);
  report(pythonOk && cliOk && playwrightOk);
}

await main();
