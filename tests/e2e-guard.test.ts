// The e2e console guard (issue 13) cannot be skipped: every e2e spec takes `test` from e2e/test.ts
// (whose auto fixture fails a test on any console, page or HTTP error), none from
// '@playwright/test'. The import check is tested on planted sources, and so is the guard's verdict.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { guardFailures } from '../e2e/console-guard';

const E2E = join(process.cwd(), 'e2e');

/** The import/export statements of a source that take values from `module` (type-only ones are fine). */
function valueImportsFrom(source: string, module: string): string[] {
  const statements = source.match(/^(?:import|export)\b[^;]*?\bfrom\s*['"][^'"]+['"]/gms) ?? [];
  const quoted = (s: string) => s.includes(`'${module}'`) || s.includes(`"${module}"`);
  const dynamic = source.match(/\b(?:import|require)\s*\(\s*['"][^'"]+['"]\s*\)/g) ?? [];
  return [...statements.filter((s) => quoted(s) && !/^(?:import|export)\s+type\b/.test(s)), ...dynamic.filter(quoted)];
}

/** Why a spec's source breaks the rule (empty: it keeps it). */
function specProblems(source: string): string[] {
  const problems = valueImportsFrom(source, '@playwright/test').map((s) => `takes values from '@playwright/test': ${s}`);
  const fromTest = valueImportsFrom(source, './test');
  if (!fromTest.some((s) => /^import\s*\{[^}]*(?<![\w.])test\b(?!\s+as\b)[^}]*\}/s.test(s)))
    problems.push("does not import `test` from './test'");
  return problems;
}

describe('e2e specs take test and expect from e2e/test.ts', () => {
  it('every e2e/*.spec.ts imports test from ./test and no value from @playwright/test', () => {
    const specs = readdirSync(E2E).filter((f) => f.endsWith('.spec.ts'));
    expect(specs.length).toBeGreaterThan(10); // the scan found the specs
    const bad = specs.flatMap((f) => specProblems(readFileSync(join(E2E, f), 'utf8')).map((p) => `e2e/${f}: ${p}`));
    expect(bad).toEqual([]);
  });

  it('the check fails on planted imports', () => {
    const good = "import { expect, type Page, test } from './test';\n";
    expect(specProblems(good)).toEqual([]);
    expect(specProblems(`import type { Page } from '@playwright/test';\n${good}`)).toEqual([]);
    expect(specProblems("import { expect, test } from '@playwright/test';\n")).toHaveLength(2);
    expect(specProblems(`import { test as base } from '@playwright/test';\n${good}`)).toHaveLength(1);
    expect(specProblems(`import { expect } from "@playwright/test";\n${good}`)).toHaveLength(1);
    expect(specProblems(`import {\n  expect,\n  test,\n} from '@playwright/test';\n`)).toHaveLength(2);
    expect(specProblems(`const { test } = require('@playwright/test');\n`)).toHaveLength(2);
    expect(specProblems("import { expect } from './test';\n")).toEqual(["does not import `test` from './test'"]);
    expect(specProblems("import { test as it } from './test';\n")).toEqual(["does not import `test` from './test'"]);
  });
});

describe("the guard's verdict (e2e/console-guard.ts)", () => {
  const pageError = 'pageerror: boom';
  const consoleError = 'console: WebGPU device lost (http://x/a.js)';

  it('passes a test with no errors and no declarations', () => {
    expect(guardFailures([], [], true)).toEqual([]);
  });

  it('fails on every undeclared error, listing each once with its count', () => {
    const [f, ...rest] = guardFailures([pageError, consoleError, pageError], [], true);
    expect(rest).toEqual([]);
    expect(f).toContain('3 console/page/HTTP error(s)');
    expect(f).toContain(`  - ${pageError} (×2)`);
    expect(f).toContain(`  - ${consoleError}`);
  });

  it('allows declared errors, and only those', () => {
    expect(guardFailures([consoleError, consoleError], [/^console: WebGPU device lost/], true)).toEqual([]);
    const failures = guardFailures([consoleError, pageError], [/^console: WebGPU device lost/g], true);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain(pageError);
    expect(failures[0]).not.toContain(consoleError);
  });

  it('fails on a declared pattern that never matched, unless the test already failed', () => {
    const failures = guardFailures([consoleError], [/WebGPU device lost/, /never/], true);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/never recorded[\s\S]*\/never\//);
    expect(guardFailures([], [/never/], false)).toEqual([]);
    expect(guardFailures([pageError], [/never/], false)).toHaveLength(1); // an undeclared error still counts
  });
});
