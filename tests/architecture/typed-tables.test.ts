// Typed tables everywhere a tensor is named: no code in src/ looks a tensor up in an arena by its
// name string outside the allowed layout functions (what counts as a look-up: typed-tables.ts).
// The scanner is tested on planted snippets, so a broken scanner cannot pass.
import type ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

import { type ArenaLookup, arenaLookups, isAllowed, LOOKUP_ALLOWED, plantedProgram, srcProgram, violations } from './typed-tables';

const root = process.cwd();
let program: ts.Program;
let lookups: ArenaLookup[];

beforeAll(() => {
  program = srcProgram(root); // type-checks src/ (a few seconds)
  lookups = arenaLookups(program, root);
}, 120_000);

describe('string arena look-ups in src/', () => {
  it('none outside the allowed layout functions (each named file:line)', () => {
    expect(violations(lookups)).toEqual([]);
  });

  it('the scan sees the allowed one (resolveLayout), so it is looking', () => {
    for (const a of LOOKUP_ALLOWED)
      expect(
        lookups.some((l) => l.file === a.file && l.functions.includes(a.fn)),
        `${a.file} ${a.fn}`,
      ).toBe(true);
    expect(lookups.every(isAllowed)).toBe(true);
  });
});

describe('the scanner fails on planted look-ups', () => {
  const PLANTED = 'src/model/planted.ts';
  // One look-up per line on lines 6–14; the lines before declare an arena and a map; the last two
  // lines are not look-ups.
  const source = [
    "import { type Arena, type BufferSlice, createArena, layoutEntries } from '../gpu/arena';",
    "import type { GpuContext } from '../gpu/context';",
    'declare const gpu: GpuContext;',
    'declare const arena: Arena;',
    'declare const cache: Map<string, BufferSlice>;',
    "export const direct = arena.get('q');",
    'export const W = (n: string): BufferSlice => arena.get(n);',
    "export const present = arena.has('q');",
    "export const found = arena.entries().find((e) => e.name === 'q');",
    'export const { get: pick } = arena;',
    "export const element = arena['get']('q');",
    "export const fresh = createArena(gpu, 'x', [{ name: 't', bytes: 4 }]).get('t');",
    'export const bound = arena.get.bind(arena);',
    "export function resolveLayout(): BufferSlice { return arena.get('q'); }",
    "export const fromMap = cache.get('q');",
    "export const laid = layoutEntries((place) => ({ q: place('q', 4) }));",
  ].join('\n');

  let planted: ArenaLookup[];
  beforeAll(() => {
    planted = arenaLookups(plantedProgram(root, { [PLANTED]: source }, program), root);
  }, 120_000);

  it('flags every spelling of a look-up, naming file:line; not a Map, not a layout', () => {
    expect(planted.filter((l) => l.file === PLANTED).map((l) => [l.line, l.member])).toEqual([
      [6, 'get'],
      [7, 'get'],
      [8, 'has'],
      [9, 'entries'],
      [10, 'get'],
      [11, 'get'],
      [12, 'get'],
      [13, 'get'],
      [14, 'get'],
    ]);
    const bad = violations(planted);
    expect(bad).toHaveLength(9);
    expect(bad[0]).toBe(
      'src/model/planted.ts:6: arena.get (a string arena look-up: name the tensor in a layout function and read its field)',
    );
    expect(bad[6]).toMatch(/^src\/model\/planted\.ts:12: createArena\(gpu, 'x', \[\{ name: 't', bytes: 4 \}\]\)\.get /);
  });

  it('the allow-list is by file and function: resolveLayout in src/gpu/arena.ts passes, one of that name elsewhere does not', () => {
    const real = planted.filter((l) => l.file === 'src/gpu/arena.ts');
    expect(real.length).toBeGreaterThan(0);
    expect(real.every(isAllowed)).toBe(true);
    const lookAlike = planted.find((l) => l.file === PLANTED && l.line === 14)!;
    expect(lookAlike.functions).toEqual(['resolveLayout']);
    expect(isAllowed(lookAlike)).toBe(false);
  });
});
