#!/usr/bin/env node
// Runs a TypeScript entry point in Node with WGSL imports and a Vulkan loader on the library path.
// Usage: node scripts/run-node.mjs src/cli/train.ts [args...]
//
// The entry is bundled by esbuild into build/node-run/ (packages stay in node_modules; .wgsl and
// ?raw imports become text, as Vite makes them) and the bundle reused while none of its inputs
// changed (each input's size and mtime, checked at every start). Under tsx every start compiled the
// project's ~180 modules again: about 1.2 s of CPU, against 0.2 s for a cached bundle (2026-11-29),
// and the test suites start a CLI about 80 times. Stack traces point into src/ (source maps).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { envWithVulkan } from './vulkan-env.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(root, 'build', 'node-run');
// Bumped when the build options below change, so that older bundles are not reused.
const OPTIONS_VERSION = 1;

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-node.mjs <entry.ts> [args...]');
  process.exit(2);
}
const entryPath = resolve(entry);
if (!existsSync(entryPath)) {
  console.error(`run-node: no such entry point: ${entry}`);
  process.exit(2);
}

/** The manifest of the cached bundle of this entry, or null when any input changed since. */
function freshManifest(manifestPath, esbuildVersion, entryRel) {
  let m;
  try {
    m = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    return null;
  }
  // The entry too: two entry paths can sanitize to the same cache name (a.b.ts, a_b.ts).
  if (m.options !== OPTIONS_VERSION || m.esbuild !== esbuildVersion || m.entry !== entryRel) return null;
  if (!existsSync(join(cacheDir, m.output))) return null;
  for (const [path, size, mtimeMs] of m.inputs) {
    let s;
    try {
      s = statSync(join(root, path));
    } catch {
      return null;
    }
    if (s.size !== size || s.mtimeMs !== mtimeMs) return null;
  }
  return m;
}

// Packages load from node_modules at run time, except this one's own name ('nsa-playground', which
// resolves through package.json's exports to TypeScript source): that is bundled.
const ownName = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).name;
const packagesExternal = {
  name: 'packages-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (a) =>
      a.path === ownName || a.path.startsWith(`${ownName}/`) ? undefined : { path: a.path, external: true },
    );
  },
};

// Each module sees its own location: import.meta.url/dirname/filename are replaced, per file, by
// the source file's, so paths a module builds from them (../../python) stay those of src/.
const ownImportMeta = {
  name: 'own-import-meta',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?ts$/ }, (a) => {
      if (a.path.includes('/node_modules/')) return undefined;
      const text = readFileSync(a.path, 'utf8');
      if (!text.includes('import.meta.')) return undefined;
      const contents = text
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(a.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(a.path)))
        .replaceAll('import.meta.filename', JSON.stringify(a.path));
      return { contents, loader: 'ts' };
    });
  },
};

/** Writes `text` to `path` atomically: concurrent starts of the same CLI never read half a file. */
function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

async function bundle(name, manifestPath, entryRel) {
  // The version from its package.json: importing esbuild costs 0.1 s, only needed to build.
  let version;
  try {
    version = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('esbuild/package.json'), 'utf8')).version;
  } catch (e) {
    console.error(`run-node: esbuild is not installed (run npm ci): ${e instanceof Error ? e.message : e}`);
    process.exit(2);
  }
  const cached = freshManifest(manifestPath, version, entryRel);
  if (cached) return cached;
  const esbuild = await import('esbuild');
  const buildStart = Date.now();
  const result = await esbuild.build({
    entryPoints: [entryPath],
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    loader: { '.wgsl': 'text', '.py': 'text' },
    sourcemap: 'external',
    sourcesContent: false,
    metafile: true,
    write: false,
    outfile: join(cacheDir, `${name}.mjs`),
    plugins: [packagesExternal, ownImportMeta],
    logLevel: 'error',
  });
  await esbuild.stop();
  const code = result.outputFiles.find((f) => f.path.endsWith('.mjs')).text;
  const map = result.outputFiles.find((f) => f.path.endsWith('.map')).text;
  const output = `${name}.${createHash('sha256').update(code).digest('hex').slice(0, 16)}.mjs`;
  if (!existsSync(join(cacheDir, output))) {
    writeAtomic(join(cacheDir, `${output}.map`), map);
    writeAtomic(join(cacheDir, output), `${code}//# sourceMappingURL=${output}.map\n`);
  }
  const inputs = Object.keys(result.metafile.inputs).map((p) => {
    const abs = resolve(root, p.replace(/\?.*$/, ''));
    const s = statSync(abs);
    return [relative(root, abs), s.size, s.mtimeMs];
  });
  const manifest = { options: OPTIONS_VERSION, esbuild: esbuild.version, entry: entryRel, output, inputs };
  // Inputs are stat'ed after the build: one edited since it began may not be in the bundle, so no
  // manifest is written and the next start builds again.
  if (inputs.every(([, , mtimeMs]) => mtimeMs < buildStart)) writeAtomic(manifestPath, JSON.stringify(manifest));
  pruneOld(name, output);
  return manifest;
}

/** Removes this entry's bundles older than a day (others may still be starting on a recent one). */
function pruneOld(name, keep) {
  const dayAgo = Date.now() - 24 * 3600 * 1000;
  for (const f of readdirSync(cacheDir)) {
    if (!f.startsWith(`${name}.`) || f === keep || f === `${keep}.map` || f.endsWith('.json')) continue;
    try {
      if (statSync(join(cacheDir, f)).mtimeMs < dayAgo) unlinkSync(join(cacheDir, f));
    } catch {
      // another start pruned it first
    }
  }
}

const entryRel = relative(root, entryPath);
const name = entryRel.replace(/\.[cm]?ts$/, '').replaceAll(/[^A-Za-z0-9_-]+/g, '_');
mkdirSync(cacheDir, { recursive: true });
const manifestPath = join(cacheDir, `${name}.json`);
const { output } = await bundle(name, manifestPath, entryRel);

const child = spawn(process.execPath, ['--enable-source-maps', join(cacheDir, output), ...args], {
  stdio: 'inherit',
  env: envWithVulkan(),
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
// Die the way the child died, so a caller sees the signal (a test's SIGKILL, a Ctrl-C).
child.on('exit', (code, signal) => {
  if (signal) {
    for (const sig of ['SIGINT', 'SIGTERM']) process.removeAllListeners(sig);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 0);
});
