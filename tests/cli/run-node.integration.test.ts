// scripts/run-node.mjs: the esbuild bundle it runs is rebuilt when any input changes (a different
// size, or the same size with a new mtime), WGSL and ?raw imports arrive as text, each module sees
// its own import.meta, and a stack trace names the TypeScript source line.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'nsa-run-node-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runEntry(): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['scripts/run-node.mjs', join(dir, 'entry.ts'), 'arg1'], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('run-node.mjs', { timeout: 60_000 }, () => {
  it('runs the current sources: rebuilt on a size change and on a same-size change with a new mtime', () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'nested.ts'), 'export const nested = import.meta.dirname;\n');
    writeFileSync(join(dir, 'shader.wgsl'), 'fn f() -> f32 { return 1.0; }\n');
    writeFileSync(join(dir, 'dep.ts'), "export const word = 'one';\nexport const depDir = import.meta.dirname;\n");
    writeFileSync(
      join(dir, 'entry.ts'),
      [
        "import wgsl from './shader.wgsl?raw';",
        "import { depDir, word } from './sub/../dep';",
        "import { nested } from './sub/nested';",
        'console.log(JSON.stringify({ word, wgsl, depDir, nested, own: import.meta.dirname, args: process.argv.slice(2) }));',
      ].join('\n') + '\n',
    );
    const first = runEntry();
    expect(first.status, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      word: 'one',
      wgsl: 'fn f() -> f32 { return 1.0; }\n',
      depDir: dir,
      nested: join(dir, 'sub'),
      own: dir,
      args: ['arg1'],
    });

    writeFileSync(join(dir, 'dep.ts'), "export const word = 'three';\nexport const depDir = import.meta.dirname;\n");
    const second = runEntry();
    expect(second.status, second.stderr).toBe(0);
    expect((JSON.parse(second.stdout) as { word: string }).word).toBe('three');

    // Same size ('three' → 'eerht'), written within the same second: only the mtime differs.
    writeFileSync(join(dir, 'dep.ts'), "export const word = 'eerht';\nexport const depDir = import.meta.dirname;\n");
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(dir, 'dep.ts'), later, later);
    const third = runEntry();
    expect(third.status, third.stderr).toBe(0);
    expect((JSON.parse(third.stdout) as { word: string }).word).toBe('eerht');

    writeFileSync(join(dir, 'shader.wgsl'), 'fn g() -> f32 { return 2.0; }\n');
    expect((JSON.parse(runEntry().stdout) as { wgsl: string }).wgsl).toBe('fn g() -> f32 { return 2.0; }\n');
  });

  it('two entries whose cache names coincide (a.b.ts, a_b.ts) each run their own code', () => {
    writeFileSync(join(dir, 'a.b.ts'), "console.log('dotted');\n");
    writeFileSync(join(dir, 'a_b.ts'), "console.log('underscored');\n");
    const run = (file: string) => spawnSync(process.execPath, ['scripts/run-node.mjs', join(dir, file)], { encoding: 'utf8' }).stdout;
    expect(run('a.b.ts')).toBe('dotted\n');
    expect(run('a_b.ts')).toBe('underscored\n');
    expect(run('a.b.ts')).toBe('dotted\n');
  });

  it('an exception names the TypeScript line; the exit code is the child’s', () => {
    writeFileSync(join(dir, 'entry.ts'), 'const n: number = 3;\n\nthrow new Error(`boom ${n}`);\n');
    const r = runEntry();
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Error: boom 3');
    expect(r.stderr).toContain(`${join(dir, 'entry.ts')}:3:`);
  });

  it('refuses a missing entry point by name', () => {
    const r = spawnSync(process.execPath, ['scripts/run-node.mjs', join(dir, 'missing.ts')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`no such entry point: ${join(dir, 'missing.ts')}`);
  });
});
