// A small flag parser: --name value, --name=value, --flag (boolean), repeated --set path=value.
// Every error is a UsageError naming the flag.
import { UsageError } from './usage';

export interface ParsedArgs {
  flags: Map<string, string>;
  sets: Array<[string, string]>;
  positional: string[];
}

export function parseArgs(argv: readonly string[], booleans: readonly string[] = []): ParsedArgs {
  const flags = new Map<string, string>();
  const sets: Array<[string, string]> = [];
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    let [name, value] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (value === undefined) {
      if (booleans.includes(name)) value = 'true';
      else {
        value = argv[++i];
        if (value === undefined) throw new UsageError(`--${name} needs a value`, { flag: name });
      }
    }
    if (name === 'set') {
      const eq = value.indexOf('=');
      if (eq < 1) throw new UsageError(`--set expects path=value, got '${value}'`, { flag: 'set', value });
      sets.push([value.slice(0, eq), value.slice(eq + 1)]);
    } else flags.set(name, value);
  }
  return { flags, sets, positional };
}

export function intFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be an integer, got '${v}'`, { flag: name, value: v });
  return n;
}

export function numFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got '${v}'`, { flag: name, value: v });
  return n;
}

/** Applies `path=value` to a nested config object; the path must already exist (typos are errors). */
export function applySet(target: object, path: string, raw: string): void {
  const keys = path.split('.');
  let obj = target as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    const next = obj[k];
    if (typeof next !== 'object' || next === null)
      throw new UsageError(`--set ${path}: no such config section '${k}'`, { flag: 'set', value: `${path}=${raw}` });
    obj = next as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (!(last in obj))
    throw new UsageError(`--set ${path}: unknown field '${last}' (known: ${Object.keys(obj).join(', ')})`, {
      flag: 'set',
      value: `${path}=${raw}`,
    });
  const old = obj[last];
  if (typeof old === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new UsageError(`--set ${path}: '${raw}' is not a number`, { flag: 'set', value: `${path}=${raw}` });
    obj[last] = n;
  } else if (typeof old === 'boolean') {
    if (raw !== 'true' && raw !== 'false')
      throw new UsageError(`--set ${path}: expected true or false, got '${raw}'`, { flag: 'set', value: `${path}=${raw}` });
    obj[last] = raw === 'true';
  } else obj[last] = raw;
}
