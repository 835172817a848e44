// The one flag parser of every CLI, strict: each CLI declares the flags it takes (ArgSpec) and
// anything else is a UsageError naming it, before any work: an unknown flag (with the closest known
// one), a positional argument where none is taken, an empty value (`--seed ''`, `--seed=`), a
// value flag given twice, a value that is another flag (`--seed --steps 2`), a boolean given a
// value other than true/false. Numbers are read strictly too (intFlag, numFlag): decimal text only,
// integers exact (a seed past 2^53 would round to another seed).
import { parseNumberText } from './number-text';
import { UsageError } from './usage';

export interface ParsedArgs {
  flags: Map<string, string>;
  sets: Array<[string, string]>;
  positional: string[];
}

export interface ArgSpec {
  /** Flags that take a value (`--name value` or `--name=value`), without their dashes. */
  values: readonly string[];
  /** Flags that take no value (`--help`, `--record`). */
  booleans?: readonly string[];
  /** Repeated `--set path=value` is accepted. */
  sets?: boolean;
  /** Value flags whose value may be empty (e.g. bench's `--matmul=`: no sizes). */
  emptyAllowed?: readonly string[];
  /** What positional arguments are, when the CLI takes any (e.g. 'run folder'); absent: none. */
  positional?: string;
  /** The usage text appended to unknown-flag and stray-argument errors. */
  usage?: string;
}

/** Levenshtein distance, for "did you mean" on a mistyped flag. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = d[0];
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = d[j];
      d[j] = Math.min(d[j] + 1, d[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return d[b.length];
}

/** The known flag closest to `name` when it is a plausible typo (distance ≤ 2), else undefined. */
export function closestFlag(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const k of known) {
    const dist = editDistance(name, k);
    if (dist < bestDistance) [best, bestDistance] = [k, dist];
  }
  return best;
}

export function parseArgs(argv: readonly string[], spec: ArgSpec): ParsedArgs {
  const booleans = spec.booleans ?? [];
  const known = [...spec.values, ...booleans, ...(spec.sets ? ['set'] : [])];
  const tail = spec.usage ? `\n${spec.usage}` : '';
  const flags = new Map<string, string>();
  const sets: Array<[string, string]> = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--') || a === '--') {
      if (spec.positional === undefined)
        throw new UsageError(`unexpected argument '${a}': this command takes flags only${tail}`, { value: a });
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
    let value = eq < 0 ? undefined : a.slice(eq + 1);
    if (!known.includes(name)) {
      const guess = closestFlag(name, known);
      throw new UsageError(`unknown flag --${name}${guess ? ` (did you mean --${guess}?)` : ''}${tail}`, { flag: name, value });
    }
    if (booleans.includes(name)) {
      if (value !== undefined) throw new UsageError(`--${name} takes no value, got '${value}'`, { flag: name, value });
      value = 'true';
    } else if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || (value.startsWith('--') && value.length > 2))
        throw new UsageError(`--${name} needs a value${value === undefined ? '' : ` (got the flag ${value})`}`, { flag: name });
      i++;
    }
    if (value.trim() === '' && !(spec.emptyAllowed ?? []).includes(name))
      throw new UsageError(`--${name} is empty: give it a value`, { flag: name, value });
    if (name === 'set') {
      const at = value.indexOf('=');
      if (at < 1) throw new UsageError(`--set expects path=value, got '${value}'`, { flag: 'set', value });
      if (value.slice(at + 1).trim() === '')
        throw new UsageError(`--set ${value.slice(0, at)}: the value is empty`, { flag: 'set', value });
      sets.push([value.slice(0, at), value.slice(at + 1)]);
    } else {
      if (flags.has(name)) throw new UsageError(`--${name} is given twice ('${flags.get(name)}' and '${value}')`, { flag: name, value });
      flags.set(name, value);
    }
  }
  return { flags, sets, positional };
}

function strictFlag(args: ParsedArgs, name: string, integer: boolean): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  try {
    return parseNumberText(v, `--${name}`, integer);
  } catch (e) {
    throw new UsageError((e as Error).message, { flag: name, value: v });
  }
}

/** --name as an exact integer (safe: |n| ≤ 2^53 − 1); undefined when absent. */
export function intFlag(args: ParsedArgs, name: string): number | undefined {
  return strictFlag(args, name, true);
}

/** --name as a finite decimal number; undefined when absent. */
export function numFlag(args: ParsedArgs, name: string): number | undefined {
  return strictFlag(args, name, false);
}

/** --name as a number > 0 (e.g. a timeout in seconds); undefined when absent. */
export function positiveFlag(args: ParsedArgs, name: string, unit: string): number | undefined {
  const n = numFlag(args, name);
  if (n !== undefined && !(n > 0))
    throw new UsageError(`--${name} must be a positive number of ${unit} (got '${args.flags.get(name)}')`, {
      flag: name,
      value: args.flags.get(name),
    });
  return n;
}

export { applySet } from './config-set';
