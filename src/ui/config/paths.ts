// Dotted-path access into plain JSON-like objects (RunConfig), immutable updates.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The value at `path` ('model.nsa.d'), or undefined when any step is missing. */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (!isRecord(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** A copy of `obj` with `path` set to `value` (missing objects on the way are created). */
export function setPath<T>(obj: T, path: string, value: unknown): T {
  const keys = path.split('.');
  const step = (cur: unknown, i: number): unknown => {
    const base = isRecord(cur) ? cur : {};
    const key = keys[i];
    return { ...base, [key]: i === keys.length - 1 ? value : step(base[key], i + 1) };
  };
  return step(obj, 0) as T;
}

/** A copy of `obj` without `path` (unchanged when it is absent). */
export function deletePath<T>(obj: T, path: string): T {
  const keys = path.split('.');
  const step = (cur: unknown, i: number): unknown => {
    if (!isRecord(cur) || !Object.hasOwn(cur, keys[i])) return cur;
    const copy = { ...cur };
    if (i === keys.length - 1) delete copy[keys[i]];
    else copy[keys[i]] = step(cur[keys[i]], i + 1);
    return copy;
  };
  return step(obj, 0) as T;
}

/** Structural equality of JSON-like values (numbers by Object.is, so NaN equals NaN). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

export { isRecord };
