#!/usr/bin/env node
// First step of `npm test`: makes sure the machine can run the suite, or says exactly what is
// missing. Needs: Debian's chromium (the e2e browser, and the SwiftShader Vulkan driver plus
// libvulkan.so.1 that Dawn uses in Node) and public/data/brown.txt (the page's corpus).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = process.env.NSA_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_LIB = '/usr/lib/chromium';
const VULKAN_FILES = ['libvulkan.so.1', 'vk_swiftshader_icd.json'];
const BROWN = resolve(root, 'public/data/brown.txt');

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
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = existsSync('/usr/bin/apt-get');
  if (!allowed || !isRoot || !hasApt)
    fail([...why, hasApt ? `Install it as root: apt-get update && apt-get install -y ${pkg}` : withoutApt]);
  const env = { DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], env);
  run('apt-get', ['install', '-y', pkg], env);
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
  const hasTorch = (python) => spawnSync(python, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
  if (['python3', '/usr/bin/python3'].some(hasTorch)) return;
  aptInstall(
    'python3-torch',
    ['no python3 with torch: the export parity and torchrun tests (tests/export) run the PyTorch package in python/.'],
    { withoutApt: 'Install PyTorch for python3 (pip install torch).' },
  );
  if (!hasTorch('/usr/bin/python3')) fail(['apt-get installed python3-torch but /usr/bin/python3 still cannot import torch.']);
}

ensureChromium();
checkVulkan();
ensureBrown();
ensurePythonTorch();
console.log(`[ensure-test-env] ok: ${CHROMIUM}, ${CHROMIUM_LIB} Vulkan files, ${BROWN}`);
