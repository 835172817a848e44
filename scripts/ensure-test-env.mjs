#!/usr/bin/env node
// First step of `npm test`: makes sure the machine can run the suite, or says exactly what is
// missing. Needs: Debian's chromium (the e2e browser, and the SwiftShader Vulkan driver plus
// libvulkan.so.1 that Dawn uses in Node), public/data/brown.txt (the page's corpus), python3 with
// torch, ruff (the Python linter and formatter, `npm run lint:python`) in .venv-lint/, and .venv-hf/
// (torch 2.x CPU, transformers, safetensors, tokenizers, pytest from the local wheel index: the
// exports loaded by Hugging Face's own classes, and the package's tests on torch 2.x).
//
//   node scripts/ensure-test-env.mjs                  everything
//   node scripts/ensure-test-env.mjs --skip-hf-venv   all but .venv-hf/ (npm test makes it beside the static checks)
//   node scripts/ensure-test-env.mjs --hf-venv-only   .venv-hf/ alone
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.NSA_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_LIB = '/usr/lib/chromium';
const APT_GET = '/usr/bin/apt-get';
const VULKAN_FILES = ['libvulkan.so.1', 'vk_swiftshader_icd.json'];
const BROWN = resolve(root, 'public/data/brown.txt');
const LINT_VENV = resolve(root, '.venv-lint');
const RUFF = resolve(LINT_VENV, 'bin/ruff');
const PYPROJECT = resolve(root, 'python/pyproject.toml');
const HF_VENV = resolve(root, '.venv-hf');
const HF_PYTHON = resolve(HF_VENV, 'bin/python');
const HF_REQUIREMENTS = resolve(root, 'scripts/hf-venv-requirements.txt');
/** A copy of the requirements the venv was made from: a changed list makes it again. */
const HF_STAMP = resolve(HF_VENV, 'requirements.txt');
// What python/nsa_playground, tests/export's scripts and torchrun import from .venv-hf (AdamW's
// constructor imports torch._dynamo; LlamaForCausalLM is the dense export's class).
const HF_WARM_IMPORTS = [
  'import torch, torch.distributed, torch.distributed.run, torch.utils.checkpoint, torch.nn.functional',
  'torch.optim.AdamW([torch.zeros(1, requires_grad=True)])',
  'from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer, GenerationMixin, LlamaConfig, LlamaForCausalLM',
  'from transformers import PretrainedConfig, PreTrainedModel, PreTrainedTokenizerFast',
  'from transformers.modeling_outputs import CausalLMOutputWithPast',
  'import safetensors.torch, tokenizers, pytest',
].join('\n');

function fail(lines) {
  console.error(['[ensure-test-env] cannot run the tests:', ...lines.map((l) => `  ${l}`)].join('\n'));
  process.exit(1);
}

function run(cmd, args, env = {}) {
  console.log(`[ensure-test-env] $ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  if (r.error) fail([`${cmd} could not start: ${r.error.message}`]);
  if (r.status !== 0) fail([`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}`]);
}

/**
 * Installs a Debian package with apt-get when this is root on a Debian-like system (and `allowed`),
 * or fails with `why` and how to install it by hand.
 */
function aptInstall(pkg, why, { allowed = true, withoutApt }) {
  if (!allowed || !canApt())
    fail([...why, existsSync(APT_GET) ? `Install it as root: apt-get update && apt-get install -y ${pkg}` : withoutApt]);
  aptGetInstall([pkg]);
}

/** Whether this process may install Debian packages: root on a system with apt-get. */
function canApt() {
  return typeof process.getuid === 'function' && process.getuid() === 0 && existsSync(APT_GET);
}

/** One apt-get update and one install of `packages`, non-interactive. */
function aptGetInstall(packages) {
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], env);
  run('apt-get', ['install', '-y', ...packages], env);
}

const hasTorch = (python) => spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
let torchPython;
/**
 * The python the tests run the PyTorch package in (tests/helpers/python.ts): the first of these with
 * torch. Remembered once found (importing torch takes seconds); looked for again until then.
 */
const pythonWithTorch = () => (torchPython ??= ['python3', '/usr/bin/python3'].find(hasTorch));
const hasPytest = (python) => spawnSync(python, ['-c', 'import pytest'], { stdio: 'ignore' }).status === 0;
const isDebiansPython = (python) =>
  spawnSync(python, ['-c', 'import sys; assert sys.executable == "/usr/bin/python3"'], { stdio: 'ignore' }).status === 0;

/**
 * On a fresh machine, the Debian packages the checks below would each install (chromium,
 * python3-torch, python3-pytest) in one apt-get update and one install: every apt-get update and
 * every dpkg run with its triggers costs seconds. What cannot be installed here (not root, no apt,
 * NSA_CHROMIUM, a pyenv python with torch but no pytest) is left to those checks and their messages.
 */
function installDebianPackages() {
  if (!canApt()) return;
  const packages = [];
  if (!existsSync(CHROMIUM) && !process.env.NSA_CHROMIUM) packages.push('chromium');
  const python = pythonWithTorch();
  if (!python) packages.push('python3-torch');
  const pytestPython = python ?? '/usr/bin/python3';
  if (isDebiansPython(pytestPython) && !hasPytest(pytestPython)) packages.push('python3-pytest');
  if (packages.length) aptGetInstall(packages);
}

function ensureChromium() {
  if (existsSync(CHROMIUM)) return;
  aptInstall(
    'chromium',
    [
      `${CHROMIUM} is missing. The e2e tests drive Debian's chromium (Playwright cannot download browsers here),`,
      `and Dawn in Node uses the Vulkan loader and SwiftShader driver that package ships in ${CHROMIUM_LIB}.`,
    ],
    { allowed: !process.env.NSA_CHROMIUM, withoutApt: 'Install Chromium, or point NSA_CHROMIUM at a Chromium binary.' },
  );
  if (!existsSync(CHROMIUM)) fail([`apt-get installed chromium but ${CHROMIUM} is still missing.`]);
}

function checkVulkan() {
  // Only Linux runs Dawn on Vulkan through chromium's loader; other systems use their own backend.
  if (process.platform !== 'linux') return;
  const missing = VULKAN_FILES.map((f) => `${CHROMIUM_LIB}/${f}`).filter((p) => !existsSync(p));
  if (missing.length)
    fail([
      `missing ${missing.join(', ')}.`,
      `Dawn (npm webgpu) in the unit tests loads libvulkan.so.1 and SwiftShader's ICD from ${CHROMIUM_LIB}`,
      "(Debian's chromium package). Reinstall it: apt-get install --reinstall chromium",
    ]);
}

function ensureBrown() {
  if (existsSync(BROWN)) return;
  run(process.execPath, [resolve(root, 'scripts/prepare-data.mjs')]);
  if (!existsSync(BROWN)) fail([`scripts/prepare-data.mjs ran but ${BROWN} is still missing.`]);
}

// The PyTorch parity and torchrun tests (tests/export) run python/nsa_playground on Debian's
// python3-torch (CPU), in /usr/bin/python3 (a pyenv python3 earlier on PATH does not see it).
function ensurePythonTorch() {
  if (pythonWithTorch()) return;
  aptInstall(
    'python3-torch',
    ['no python3 with torch: the export parity and torchrun tests (tests/export) run the PyTorch package in python/.'],
    { withoutApt: 'Install PyTorch for python3 (pip install torch).' },
  );
  if (!hasTorch('/usr/bin/python3')) fail(['apt-get installed python3-torch but /usr/bin/python3 still cannot import torch.']);
}

// The PyTorch package's own pytest cases (python/tests, run by tests/export/python-pytest.integration.test.ts)
// need pytest in the same python as torch.
function ensurePytest() {
  // The python tests/helpers/python.ts picks: the first of these with torch.
  const python = pythonWithTorch();
  if (!python || hasPytest(python)) return;
  const why = [`${python} (the python with torch) has no pytest: the PyTorch package's tests (python/tests) run under it.`];
  if (!isDebiansPython(python)) fail([...why, `Install pytest for it: ${python} -m pip install pytest`]);
  aptInstall('python3-pytest', why, { withoutApt: `Install pytest for it: ${python} -m pip install pytest` });
  if (!hasPytest(python)) fail([`apt-get installed python3-pytest but ${python} still cannot import pytest.`]);
}

/** The ruff version python/pyproject.toml pins (`required-version = "==X"`: ruff refuses to run as another). */
function pinnedRuff() {
  const m = /^required-version\s*=\s*"==([^"]+)"/m.exec(readFileSync(PYPROJECT, 'utf8'));
  if (!m) fail([`${PYPROJECT} pins no ruff version ([tool.ruff] required-version = "==X"), which ${LINT_VENV} must hold.`]);
  return m[1];
}

function ruffVersion() {
  const r = spawnSync(RUFF, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().replace(/^ruff /, '') : null;
}

// npm run lint:python runs ruff (lint and format check of python/ and scripts/) from a virtual
// environment of its own, .venv-lint/ (gitignored), made here with python3's venv and pip.
function ensureRuff() {
  const version = pinnedRuff();
  if (ruffVersion() === version) return;
  const pip = resolve(LINT_VENV, 'bin/pip');
  if (!existsSync(pip)) {
    console.log(`[ensure-test-env] $ python3 -m venv ${LINT_VENV}`);
    let r = spawnSync('python3', ['-m', 'venv', LINT_VENV], { encoding: 'utf8' });
    if (r.error) fail([`python3 could not start (${r.error.message}): the Python linter (ruff) is installed into a venv by python3.`]);
    if (r.status !== 0 && /ensurepip/.test(`${r.stdout}${r.stderr}`)) {
      // Debian's python3 makes venvs with pip only with its python3-venv package.
      rmSync(LINT_VENV, { recursive: true, force: true });
      const why = [`python3 -m venv cannot make ${LINT_VENV} (no ensurepip): the Python linter (ruff) is installed there.`];
      aptInstall('python3-venv', why, { withoutApt: 'Install the venv module (ensurepip) for python3.' });
      console.log(`[ensure-test-env] $ python3 -m venv ${LINT_VENV}`);
      r = spawnSync('python3', ['-m', 'venv', LINT_VENV], { encoding: 'utf8' });
    }
    if (r.status !== 0 || !existsSync(pip)) {
      rmSync(LINT_VENV, { recursive: true, force: true });
      fail([`python3 -m venv ${LINT_VENV} failed (exit ${r.status ?? r.signal}):`, ...`${r.stdout}${r.stderr}`.trim().split('\n')]);
    }
  }
  // --retries 0: where an index is out of reach (an offline machine with a local wheel index),
  // pip would otherwise back off five times before it looks elsewhere (about 15 s).
  run(pip, ['install', '--disable-pip-version-check', '--retries', '0', `ruff==${version}`]);
  const got = ruffVersion();
  if (got !== version)
    fail([`pip installed ruff ${version} into ${LINT_VENV}, but ${RUFF} reports ${got ?? 'nothing (it does not run)'}.`]);
}

// .venv-hf/ (gitignored): Hugging Face's stack and torch 2.x, for tests/export (the exports loaded
// by AutoModelForCausalLM / AutoTokenizer; the parity and torchrun tests on torch 2.x as well as
// Debian's 1.13). Made without pip of its own (.venv-lint's pip installs into it: --python) from the
// pinned list, then byte-compiled by importing what the package and the tests import (below).
function ensureHfVenv() {
  const wanted = readFileSync(HF_REQUIREMENTS, 'utf8');
  // find_spec, not import: importing torch and transformers alone takes seconds.
  const check = 'import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in sys.argv[1:]))';
  const imports = () =>
    spawnSync(HF_PYTHON, ['-c', check, 'torch', 'transformers', 'safetensors', 'tokenizers', 'pytest'], { stdio: 'ignore' }).status === 0;
  if (existsSync(HF_STAMP) && readFileSync(HF_STAMP, 'utf8') === wanted && imports()) {
    if (!hfVenvWarmed()) warmHfVenv(); // a venv made before the warm-up
    return;
  }
  const t0 = performance.now();
  rmSync(HF_VENV, { recursive: true, force: true });
  run('python3', ['-m', 'venv', '--without-pip', HF_VENV]);
  run(resolve(LINT_VENV, 'bin/pip'), [
    '--python',
    HF_PYTHON,
    'install',
    '--disable-pip-version-check',
    '--retries',
    '0',
    '--no-compile',
    '--quiet',
    '-r',
    HF_REQUIREMENTS,
  ]);
  if (!imports())
    fail([
      `pip installed ${HF_REQUIREMENTS} into ${HF_VENV}, but ${HF_PYTHON} cannot import torch, transformers, safetensors, tokenizers and pytest.`,
    ]);
  warmHfVenv();
  writeFileSync(HF_STAMP, wanted);
  console.log(`[ensure-test-env] ${HF_VENV} made in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// Where PYTHONDONTWRITEBYTECODE is set (this machine image sets it), Python never caches what it
// compiles, and every test's python recompiled torch's and transformers' sources: about 5 s of CPU
// per process. One import of what they use, with caching on, writes those ~2,200 .pyc files (14 s
// once); pip's own --compile would take 39 s of CPU for all 9,200 files, three quarters never
// imported. Measured on the integration tier alone: 374 → 318 s of CPU, 304 → 263 s.
function warmHfVenv() {
  console.log(`[ensure-test-env] byte-compiling what the tests import from ${HF_VENV}`);
  const env = { ...process.env };
  delete env.PYTHONDONTWRITEBYTECODE;
  const warm = spawnSync(HF_PYTHON, ['-c', HF_WARM_IMPORTS], { stdio: 'inherit', env });
  if (warm.status !== 0) fail([`${HF_PYTHON} could not import what the tests use (exit ${warm.status ?? warm.signal}).`]);
}

/** Whether torch's modules are byte-compiled in .venv-hf (lib/python3.X/site-packages/torch). */
function hfVenvWarmed() {
  const lib = resolve(HF_VENV, 'lib');
  return readdirSync(lib).some((v) => existsSync(resolve(lib, v, 'site-packages/torch/__pycache__')));
}

const argv = process.argv.slice(2);
const unknown = argv.filter((a) => a !== '--skip-hf-venv' && a !== '--hf-venv-only');
if (unknown.length) fail([`unknown argument ${unknown[0]} (takes --skip-hf-venv or --hf-venv-only)`]);
if (argv.includes('--hf-venv-only')) {
  if (ruffVersion() === null)
    fail([`${LINT_VENV} (made by node scripts/ensure-test-env.mjs --skip-hf-venv) holds the pip that fills ${HF_VENV}.`]);
  ensureHfVenv();
  console.log(`[ensure-test-env] ok: ${HF_VENV}`);
} else {
  installDebianPackages();
  ensureChromium();
  checkVulkan();
  ensureBrown();
  ensurePythonTorch();
  ensurePytest();
  ensureRuff();
  if (!argv.includes('--skip-hf-venv')) ensureHfVenv();
  console.log(
    `[ensure-test-env] ok: ${CHROMIUM}, ${CHROMIUM_LIB} Vulkan files, ${BROWN}, python3 with torch and pytest, ruff in ${LINT_VENV}` +
      (argv.includes('--skip-hf-venv') ? '' : `, ${HF_VENV}`),
  );
}
