// The Vitest tiers (tests/helpers/tiers.mjs): every tests/**/*.test.ts file is in exactly one
// project, the config builds its projects from those lists, and no file of the fast tier reaches
// the GPU, a child process or python through its imports (tests/setup/fast-tier.ts also refuses
// them while it runs, as this file checks).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

import { describe, expect, it } from 'vitest';

import config from '../vitest.config';
import { FAST_TIER_SPAWN_ERROR, GPU_FILES, LEARNING_CHECK, type TierName, TIERS } from './helpers/tiers.mjs';

const TIER_NAMES = Object.keys(TIERS) as TierName[];

function testFiles(): string[] {
  return (readdirSync('tests', { recursive: true }) as string[])
    .map((f) => join('tests', f).split('\\').join('/'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
}

/** picomatch semantics for the subset tiers.mjs uses: literal segments, `*` and `**`. */
function globRegex(glob: string): RegExp {
  if (/[?[\]{}()!+@]/.test(glob)) throw new Error(`glob ${glob}: tiers.mjs globs may use only '*' and '**'`);
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (glob.startsWith('**/', i)) {
      re += '(?:[^/]+/)*';
      i += 2;
    } else if (ch === '*') re += '[^/]*';
    else re += ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

const matchesAny = (file: string, globs: string[]) => globs.some((g) => globRegex(g).test(file));
const tiersOf = (file: string) => TIER_NAMES.filter((t) => matchesAny(file, TIERS[t].include) && !matchesAny(file, TIERS[t].exclude));

describe('test tiers', () => {
  it('the glob matcher agrees with picomatch on the shapes used', () => {
    expect(globRegex('tests/*.test.ts').test('tests/tiers.test.ts')).toBe(true);
    expect(globRegex('tests/*.test.ts').test('tests/ui/store.test.ts')).toBe(false);
    expect(globRegex('tests/ui/**/*.test.ts').test('tests/ui/store.test.ts')).toBe(true);
    expect(globRegex('tests/ui/**/*.test.ts').test('tests/ui/a/b/store.test.ts')).toBe(true);
    expect(globRegex('tests/ui/**/*.test.ts').test('tests/uix/store.test.ts')).toBe(false);
    expect(globRegex('tests/train/learning*.test.ts').test('tests/train/learning-nsa.test.ts')).toBe(true);
    expect(globRegex('tests/train/learning*.test.ts').test('tests/train/learningXtest.ts')).toBe(false);
    expect(globRegex('tests/**/*.integration.test.ts').test('tests/cli/strict-cli.integration.test.ts')).toBe(true);
    expect(globRegex('tests/**/*.integration.test.ts').test('tests/cli/strict-cli.test.ts')).toBe(false);
  });

  it('every tests/**/*.test.ts file is in exactly one tier', () => {
    const files = testFiles();
    expect(files.length).toBeGreaterThan(50);
    const wrong = files.map((f) => ({ f, in: tiersOf(f) })).filter((x) => x.in.length !== 1);
    const lines = wrong.map((x) => `${x.f}: ${x.in.length ? `in ${x.in.join(' and ')}` : 'in no tier'}`);
    expect(lines, `add each file to exactly one tier in tests/helpers/tiers.mjs:\n${lines.join('\n')}`).toEqual([]);
    expect(tiersOf('tests/tiers.test.ts')).toEqual(['fast']);
    expect(tiersOf('tests/cli/strict-cli.integration.test.ts')).toEqual(['integration']);
    expect(tiersOf('tests/export/parity.integration.test.ts')).toEqual(['integration']); // python and the GPU
    expect(tiersOf(LEARNING_CHECK)).toEqual(['gpu']); // npm test keeps the learning check
    expect(tiersOf('tests/learning/nsa.test.ts')).toEqual(['learning']);
    for (const t of TIER_NAMES)
      expect(
        files.some((f) => tiersOf(f)[0] === t),
        `tier ${t} has no files`,
      ).toBe(true);
  });

  it('every file named one by one exists (no stale entries)', () => {
    const literal = [...GPU_FILES, ...TIER_NAMES.flatMap((t) => [...TIERS[t].include, ...TIERS[t].exclude])].filter(
      (g) => !g.includes('*'),
    );
    expect(literal.filter((f) => !existsSync(f))).toEqual([]);
  });

  it('vitest.config.ts builds its projects from these lists', () => {
    const projects = (config.test?.projects ?? []) as { test?: { name?: string; include?: string[]; exclude?: string[] } }[];
    const seen = projects.map((p) => ({ name: p.test?.name, include: p.test?.include, exclude: p.test?.exclude }));
    expect(seen).toEqual(TIER_NAMES.map((name) => ({ name, include: TIERS[name].include, exclude: TIERS[name].exclude })));
  });

  it('no fast-tier file imports, at any depth, the GPU helper, the Node device or Dawn', () => {
    const fast = testFiles().filter((f) => tiersOf(f)[0] === 'fast');
    const FORBIDDEN = ['tests/helpers/gpu.ts', 'src/gpu/node-device.ts', 'webgpu'];
    const bad = fast.flatMap((f) => {
      const path = importPath(f, FORBIDDEN);
      return path ? [`${path.join(' → ')}`] : [];
    });
    expect(bad, `these fast-tier files reach the GPU; list them in GPU_FILES (tests/helpers/tiers.mjs):\n${bad.join('\n')}`).toEqual([]);
  });

  it('no fast-tier test file imports child_process or the python helper (this file excepted: it tests the guard)', () => {
    const fast = testFiles().filter((f) => tiersOf(f)[0] === 'fast' && f !== 'tests/tiers.test.ts');
    const FORBIDDEN = ['node:child_process', 'child_process', 'tests/helpers/python.ts'];
    const bad = fast.filter((f) => importsOf(f).some((i) => FORBIDDEN.includes(i)));
    expect(bad, `these fast-tier files start processes; name them *.integration.test.ts:\n${bad.join('\n')}`).toEqual([]);
  });

  it('in the fast tier, starting a process throws (tests/setup/fast-tier.ts)', async () => {
    const cp = await import('node:child_process');
    expect(() => cp.spawnSync('true')).toThrow(FAST_TIER_SPAWN_ERROR);
    expect(() => cp.spawn('true')).toThrow(FAST_TIER_SPAWN_ERROR);
    expect(() => cp.execFileSync('true')).toThrow(FAST_TIER_SPAWN_ERROR);
  });
});

// Value imports of a module (type-only imports and exports are skipped), static and dynamic.
const IMPORT_RE = /\b(?:import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return spec; // a package: kept by name
  const base = normalize(join(dirname(from), spec))
    .split('\\')
    .join('/');
  const stem = base.replace(/\.(m?js)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, `${base}/index.ts`])
    if (existsSync(c) && statSync(c).isFile()) return c;
  return undefined;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT_RE)) {
    if (m[1]) continue;
    const r = resolveImport(file, m[2] ?? m[3]);
    if (r) out.push(r);
  }
  return out;
}

/** The chain of imports from `file` to a forbidden module, or undefined. */
function importPath(file: string, forbidden: string[]): string[] | undefined {
  const seen = new Set<string>([file]);
  const queue: string[][] = [[file]];
  while (queue.length) {
    const chain = queue.shift()!;
    const at = chain[chain.length - 1];
    if (forbidden.includes(at)) return chain;
    if (!at.startsWith('tests/') && !at.startsWith('src/')) continue; // packages are leaves
    for (const next of importsOf(at)) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push([...chain, next]);
    }
  }
  return undefined;
}
