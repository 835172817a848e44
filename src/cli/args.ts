// A small flag parser: --name value, --name=value, --flag (boolean), repeated --set path=value.
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
        if (value === undefined) throw new Error(`--${name} needs a value`);
      }
    }
    if (name === 'set') {
      const eq = value.indexOf('=');
      if (eq < 1) throw new Error(`--set expects path=value, got '${value}'`);
      sets.push([value.slice(0, eq), value.slice(eq + 1)]);
    } else flags.set(name, value);
  }
  return { flags, sets, positional };
}

export function intFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`--${name} must be an integer, got '${v}'`);
  return n;
}

export function numFlag(args: ParsedArgs, name: string): number | undefined {
  const v = args.flags.get(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} must be a number, got '${v}'`);
  return n;
}

/** Applies `path=value` to a nested config object; the path must already exist (typos are errors). */
export function applySet(target: object, path: string, raw: string): void {
  const keys = path.split('.');
  let obj = target as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) {
    const next = obj[k];
    if (typeof next !== 'object' || next === null) throw new Error(`--set ${path}: no such config section '${k}'`);
    obj = next as Record<string, unknown>;
  }
  const last = keys[keys.length - 1];
  if (!(last in obj)) throw new Error(`--set ${path}: unknown field '${last}' (known: ${Object.keys(obj).join(', ')})`);
  const old = obj[last];
  if (typeof old === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new Error(`--set ${path}: '${raw}' is not a number`);
    obj[last] = n;
  } else if (typeof old === 'boolean') {
    if (raw !== 'true' && raw !== 'false') throw new Error(`--set ${path}: expected true or false, got '${raw}'`);
    obj[last] = raw === 'true';
  } else obj[last] = raw;
}
