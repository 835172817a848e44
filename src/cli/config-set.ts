// `--set path=value`: one config field from its dotted path. Only fields of the config may be set:
// every step of the path must be the object's own property (so `__proto__`, `constructor`,
// `prototype`, `toString` and the like are refused, and nothing reaches Object.prototype), the
// last one a leaf (a section cannot be overwritten by a scalar), with a value of the field's kind.
// Optional fields a preset leaves out (OPTIONAL_FIELDS) are known by name; the gate ablation has a
// text form (`model.nsa.gates=force:sel`, src/definitions/gates.ts).
import { parseGateAblation } from '../definitions/gates';
import { parseNumberText } from './number-text';
import { UsageError } from './usage';

/** Keys that reach an object's prototype machinery: never a config field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Fields a config may leave out, with the default that then applies, by the path of their section. */
const OPTIONAL_FIELDS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  train: { divergenceFactor: 0, divergenceSteps: 0, shortSeqSteps: 0, shortSeqLen: 0, shortSeqPairs: 0 },
  model: { posEncoding: 'rope', shortConv: 0 },
  'data.recall': { layout: 'scattered' },
};

/** Object-valued fields with a text form. */
const PARSED_FIELDS: Readonly<Record<string, (text: string) => unknown>> = {
  'model.nsa.gates': parseGateAblation,
};

const isSection = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Applies `path=value` to a nested config object; throws a UsageError (flag 'set') naming the path. */
export function applySet(target: object, path: string, raw: string): void {
  const fail = (why: string): never => {
    throw new UsageError(`--set ${path}: ${why}`, { flag: 'set', value: `${path}=${raw}` });
  };
  const keys = path.split('.');
  for (const k of keys) {
    if (k === '') fail('empty step in the path');
    if (FORBIDDEN_KEYS.has(k)) fail(`'${k}' is not a config field`);
  }
  const whole = Object.keys(PARSED_FIELDS).find((f) => path.startsWith(`${f}.`));
  if (whole) fail(`${whole} is set as a whole (--set ${whole}=…), not field by field`);
  let obj = target as Record<string, unknown>;
  for (const [i, k] of keys.slice(0, -1).entries()) {
    const next = Object.hasOwn(obj, k) ? obj[k] : undefined;
    if (!isSection(next)) {
      const where = keys.slice(0, i).join('.') || 'the config';
      fail(`no config section '${k}' in ${where} (sections: ${sectionsOf(obj).join(', ') || 'none'})`);
    }
    obj = next as Record<string, unknown>;
  }
  const section = keys.slice(0, -1).join('.');
  const last = keys[keys.length - 1];
  const optionals = OPTIONAL_FIELDS[section] ?? {};
  const optional = Object.hasOwn(optionals, last);
  if (!Object.hasOwn(obj, last) && !optional) {
    const known = [...Object.keys(obj), ...Object.keys(optionals).filter((f) => !Object.hasOwn(obj, f))];
    fail(`unknown field '${last}' (known: ${known.join(', ')})`);
  }
  const parse = PARSED_FIELDS[path];
  if (parse) {
    try {
      obj[last] = parse(raw);
    } catch (e) {
      fail((e as Error).message);
    }
    return;
  }
  // An absent optional field takes the type of its default.
  const old = optional && obj[last] === undefined ? optionals[last] : obj[last];
  if (isSection(old) || Array.isArray(old)) fail(`is a section, not a field (set its fields: ${path}.<field>=value)`);
  if (typeof old === 'number') {
    // Integer text must stay exact (a seed past 2^53 would silently become its neighbour).
    const integerText = Number.isInteger(old) && /^\s*[+-]?\d+\s*$/.test(raw);
    try {
      obj[last] = parseNumberText(raw, `--set ${path}`, integerText);
    } catch (e) {
      throw new UsageError((e as Error).message, { flag: 'set', value: `${path}=${raw}` });
    }
  } else if (typeof old === 'boolean') {
    if (raw !== 'true' && raw !== 'false') fail(`expected true or false, got '${raw}'`);
    obj[last] = raw === 'true';
  } else obj[last] = raw;
}

function sectionsOf(obj: Record<string, unknown>): string[] {
  return Object.keys(obj).filter((k) => isSection(obj[k]));
}
