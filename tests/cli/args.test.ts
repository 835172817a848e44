// The strict flag parser every CLI uses (src/cli/args.ts) and `--set` (src/cli/config-set.ts), in
// process: each rule of issue 10 part 5 is a UsageError naming the flag or path.
import { describe, expect, it } from 'vitest';

import { closestFlag, intFlag, numFlag, parseArgs, positiveFlag } from '../../src/cli/args';
import { applySet } from '../../src/cli/config-set';
import { runConfigFromArgs, TRAIN_ARGS } from '../../src/cli/run-config';
import { validateRunConfig } from '../../src/train/config';
import { preset } from '../../src/train/presets/presets';
import { usageError } from '../helpers/usage-error';

const train = (...argv: string[]) => runConfigFromArgs(parseArgs(argv, TRAIN_ARGS)).config;

describe('strict flags', () => {
  it('an unknown flag is an error naming it, with the closest known flag (--stpes 2 trained 300 steps)', () => {
    const e = usageError(() => train('--stpes', '2'));
    expect(e.flag).toBe('stpes');
    expect(e.message).toMatch(/^unknown flag --stpes \(did you mean --steps\?\)\nusage: npm run train/);
    expect(usageError(() => train('--zzzzzz')).message).toMatch(/^unknown flag --zzzzzz\nusage/);
    expect(closestFlag('bacth', ['batch', 'steps'])).toBe('batch');
  });

  it('positional arguments are errors where none are taken; taken where declared', () => {
    const e = usageError(() => train('--steps', '2', 'extra'));
    expect(e.value).toBe('extra');
    expect(e.message).toMatch(/^unexpected argument 'extra': this command takes flags only/);
    expect(usageError(() => train('-s', '2')).value).toBe('-s');
    expect(parseArgs(['a', 'b'], { values: [], positional: 'run folder' }).positional).toEqual(['a', 'b']);
  });

  it("empty values are errors (--seed '' became 0), for flags and --set", () => {
    for (const argv of [['--seed', ''], ['--seed='], ['--seed', '  '], ['--lr=']])
      expect(usageError(() => train(...argv)).flag).toBe(argv[0].split('=')[0].slice(2));
    const e = usageError(() => train('--set', 'train.seed='));
    expect(e.flag).toBe('set');
    expect(e.message).toBe('--set train.seed: the value is empty');
    expect(parseArgs(['--matmul='], { values: ['matmul'], emptyAllowed: ['matmul'] }).flags.get('matmul')).toBe('');
  });

  it('a missing value, a flag as value, a repeated flag, a boolean with a value', () => {
    expect(usageError(() => train('--steps')).message).toBe('--steps needs a value');
    expect(usageError(() => train('--seed', '--steps', '2')).message).toBe('--seed needs a value (got the flag --steps)');
    expect(usageError(() => train('--steps', '2', '--steps', '3')).message).toBe("--steps is given twice ('2' and '3')");
    expect(usageError(() => train('--help=yes')).flag).toBe('help');
    expect(parseArgs(['--lr', '-1e-3'], TRAIN_ARGS).flags.get('lr')).toBe('-1e-3'); // a negative number is a value
  });

  it('numbers are decimal and integers exact: no hex, blanks, Infinity, fractions, or rounding past 2^53', () => {
    const a = parseArgs(
      ['--steps', '0x10', '--batch', '1.5', '--seed', '9007199254740993', '--lr', 'Infinity', '--accum', '1e3'],
      TRAIN_ARGS,
    );
    expect(usageError(() => intFlag(a, 'steps')).message).toBe("--steps must be an integer, got '0x10'");
    expect(usageError(() => intFlag(a, 'batch')).message).toBe("--batch must be an integer, got '1.5'");
    expect(usageError(() => intFlag(a, 'seed')).message).toMatch(/^--seed: 9007199254740993 is beyond the exact integers/);
    expect(usageError(() => numFlag(a, 'lr')).flag).toBe('lr');
    expect(intFlag(a, 'accum')).toBe(1000);
    expect(train('--seed', '9007199254740991').train.seed).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('--stall-timeout 0 and -1 are refused (positive numbers only)', () => {
    for (const v of ['0', '-1', '-0.5']) {
      const e = usageError(() => positiveFlag(parseArgs(['--stall-timeout', v], TRAIN_ARGS), 'stall-timeout', 'seconds'));
      expect(e.flag).toBe('stall-timeout');
      expect(e.message).toBe(`--stall-timeout must be a positive number of seconds (got '${v}')`);
    }
    expect(positiveFlag(parseArgs(['--stall-timeout', '0.5'], TRAIN_ARGS), 'stall-timeout', 'seconds')).toBe(0.5);
  });

  it('--data file: needs a path', () => {
    expect(usageError(() => train('--data', 'file:')).flag).toBe('data');
  });
});

describe('--set reaches config fields only', () => {
  it('__proto__, constructor, prototype and inherited names are refused; Object.prototype is untouched', () => {
    for (const path of [
      '__proto__.toString',
      '__proto__.polluted',
      'train.__proto__.polluted',
      'constructor.prototype.polluted',
      'model.constructor',
      'train.toString',
      'train.hasOwnProperty',
      'model.nsa.valueOf',
    ]) {
      const e = usageError(() => applySet(preset('tiny'), path, '1'));
      expect(e.flag).toBe('set');
      expect(e.value).toBe(`${path}=1`);
      expect(e.message).toMatch(new RegExp(`^--set ${path.replace(/\./g, '\\.')}: `));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(typeof {}.toString).toBe('function');
  });

  it('unknown fields and sections are named with the known ones; a section cannot be overwritten', () => {
    expect(usageError(() => applySet(preset('tiny'), 'train.stpes', '2')).message).toMatch(
      /^--set train\.stpes: unknown field 'stpes' \(known: steps, batchSize/,
    );
    expect(usageError(() => applySet(preset('tiny'), 'nope.x', '2')).message).toBe(
      "--set nope.x: no config section 'nope' in the config (sections: model, train, data)",
    );
    expect(usageError(() => applySet(preset('tiny'), 'model.nsa', '2')).message).toMatch(/^--set model\.nsa: is a section, not a field/);
    expect(usageError(() => applySet(preset('tiny'), 'model..dim', '2')).message).toBe('--set model..dim: empty step in the path');
  });

  it('optional fields a preset leaves out can be set (the divergence guard)', () => {
    const c = train('--set', 'train.divergenceFactor=4', '--set', 'train.divergenceSteps=3');
    expect([c.train.divergenceFactor, c.train.divergenceSteps]).toEqual([4, 3]);
    expect(validateRunConfig(c)).toEqual([]);
  });

  it('gate ablations: model.nsa.gates=none|force:cmp|sel|win|freeze:G|freeze:a,b,c', () => {
    const gates = (v: string) => train('--attention', 'nsa', '--set', `model.nsa.gates=${v}`).model.nsa!.gates;
    expect(gates('force:sel')).toEqual({ kind: 'force', branch: 'sel' });
    expect(gates('force:cmp')).toEqual({ kind: 'force', branch: 'cmp' });
    expect(gates('none')).toEqual({ kind: 'none' });
    expect(gates('freeze:0.25')).toEqual({ kind: 'freeze', value: 0.25 });
    expect(gates('freeze:1,0,0.5')).toEqual({ kind: 'freeze', value: [1, 0, 0.5] });
    expect(validateRunConfig(train('--attention', 'nsa', '--set', 'model.nsa.gates=force:sel'))).toEqual([]);
    for (const bad of ['force:all', 'freeze:2', 'freeze:1,1', 'force', 'force:sel:x', '{kind:none}']) {
      const e = usageError(() => gates(bad));
      expect(e.message).toMatch(/^--set model\.nsa\.gates: '.*' is not a gate ablation: expected 'none', 'force:cmp\|sel\|win'/);
    }
    expect(usageError(() => train('--set', 'model.nsa.gates.kind=force')).message).toMatch(/model\.nsa\.gates is set as a whole/);
  });

  it('values of the field kind: exact integers, true/false, decimal numbers', () => {
    expect(usageError(() => applySet(preset('tiny'), 'train.seed', '9007199254740993')).message).toMatch(/beyond the exact integers/);
    expect(usageError(() => applySet(preset('tiny'), 'model.nsa.forceInit', 'yes')).message).toBe(
      "--set model.nsa.forceInit: expected true or false, got 'yes'",
    );
    expect(usageError(() => applySet(preset('tiny'), 'train.lrMax', '0x1')).flag).toBe('set');
    const c = preset('tiny');
    applySet(c, 'train.seed', '4294967297');
    expect(c.train.seed).toBe(2 ** 32 + 1);
  });
});
