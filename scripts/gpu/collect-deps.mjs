#!/usr/bin/env node
// Lists the node_modules folders the offline GPU bundle needs: the closure, over `dependencies`
// and installed `optionalDependencies` (the platform's native builds: rolldown, lightningcss,
// esbuild), of the packages the Node side runs with. Resolution follows Node's: a package's own
// nested node_modules first, then each parent's, up to the root.
// Usage: node scripts/gpu/collect-deps.mjs ROOT_PACKAGE... (prints paths relative to the repo root)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const roots = process.argv.slice(2);
if (!roots.length) {
  console.error('usage: node scripts/gpu/collect-deps.mjs PACKAGE...');
  process.exit(2);
}

/** The installed folder of `name` as seen from package folder `from` (null: not installed). */
function resolvePackage(name, from) {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === repo || dir === dirname(dir)) return null;
  }
}

const seen = new Set();
const queue = roots.map((name) => {
  const dir = resolvePackage(name, repo);
  if (!dir) throw new Error(`collect-deps: root package '${name}' is not installed (run npm ci first)`);
  return dir;
});
while (queue.length) {
  const dir = queue.pop();
  if (seen.has(dir)) continue;
  seen.add(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const name of Object.keys(pkg.dependencies ?? {})) {
    const dep = resolvePackage(name, dir);
    if (!dep) throw new Error(`collect-deps: ${pkg.name} needs '${name}', which is not installed`);
    queue.push(dep);
  }
  // Optional dependencies are the other platforms' builds too: take the ones npm installed.
  for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
    const dep = resolvePackage(name, dir);
    if (dep) queue.push(dep);
  }
}
for (const dir of [...seen].sort()) console.log(relative(repo, dir));
