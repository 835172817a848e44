// The layer order of src/, as data, and the check that every import follows it. The folder order
// is the data path: definitions (configs, shapes, block arithmetic) → gpu → kernels → model →
// train | decode → bench → worker | cli → ui. A module may import its own folder and any lower layer, never a higher one
// nor a sibling of its own rank. The float64 reference is the oracle: it imports only the bottom
// layer, and production code does not import it (one documented exception below).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

import ts from 'typescript';

/** Rank of each top-level unit under src/ (a folder, or a file at src/ top level). */
export const LAYERS: Readonly<Record<string, number>> = {
  definitions: 0,
  util: 0,
  gpu: 1,
  kernels: 2,
  model: 3,
  train: 4, // training: data, trainer and loop, presets, evaluation, checkpoints, export
  decode: 4, // generation: the GPU decoder, the token decoders, sampling
  bench: 5, // the NSA-vs-dense benchmark (training sizes come from train's presets)
  worker: 6,
  cli: 6,
  'index.ts': 7, // the Node entry: re-exports browser.ts plus the Node device
  'browser.ts': 6,
  ui: 7,
};

/** The oracle: may import the bottom layer only; production code may not import it. */
export const ORACLE = 'reference';

/**
 * Production imports of the oracle that are allowed, with the reason. The CPU decoder is the
 * float64 oracle of decoding; `npm run generate --cpu` runs it, to check the GPU decoder against.
 */
export const ORACLE_ALLOWED: ReadonlyArray<{ from: string; to: string; why: string }> = [
  {
    from: 'src/decode/generate.ts',
    to: 'src/reference/decoder.ts',
    why: "generate's --cpu path runs the float64 decoder, the oracle the GPU decoder is checked against",
  },
];

export interface ImportEdge {
  from: string;
  to: string;
}

export interface Violation extends ImportEdge {
  rule: string;
}

/** Top-level unit of a path under src/ ('model' for src/model/plan.ts, 'index.ts' for src/index.ts). */
export function unitOf(path: string): string | undefined {
  const parts = normalize(path).split('/');
  if (parts[0] !== 'src' || parts.length < 2) return undefined;
  return parts[1];
}

export function checkEdge(e: ImportEdge): Violation | undefined {
  const a = unitOf(e.from);
  const b = unitOf(e.to);
  if (a === undefined || b === undefined || a === b) return undefined;
  if (b === 'shaders') return undefined;
  const bad = (rule: string): Violation => ({ ...e, rule });
  if (a === ORACLE) return LAYERS[b] === 0 ? undefined : bad(`the reference imports only the bottom layer (definitions, util), not ${b}`);
  if (b === ORACLE) {
    return ORACLE_ALLOWED.some((x) => x.from === e.from && x.to === e.to)
      ? undefined
      : bad('production code does not import the float64 reference');
  }
  const ra = LAYERS[a];
  const rb = LAYERS[b];
  if (ra === undefined) return bad(`src/${a} has no layer: add it to LAYERS in tests/architecture/layers.ts`);
  if (rb === undefined) return bad(`src/${b} has no layer: add it to LAYERS in tests/architecture/layers.ts`);
  if (rb > ra) return bad(`${a} (layer ${ra}) imports ${b} (layer ${rb}): imports go down the data path only`);
  if (rb === ra) return bad(`${a} and ${b} are siblings of layer ${ra}: neither imports the other`);
  return undefined;
}

/** Relative imports of one source text (static imports, re-exports and dynamic imports). */
export function importsOf(file: string, text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) => {
      const bare = s.split('?')[0];
      const p = normalize(join(dirname(file), bare));
      return /\.(ts|tsx|wgsl|css|json|mjs)$/.test(p) ? p : `${p}.ts`;
    });
}

export function sourceFiles(root: string, dir = 'src'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name);
    if (statSync(join(root, p)).isDirectory()) out.push(...sourceFiles(root, p));
    else if (/\.(ts|tsx)$/.test(name)) out.push(p);
  }
  return out;
}

export function importEdges(root: string): ImportEdge[] {
  return sourceFiles(root).flatMap((from) =>
    importsOf(from, readFileSync(join(root, from), 'utf8')).map((to) => ({ from, to: relative('.', to) })),
  );
}

export function violations(edges: readonly ImportEdge[]): Violation[] {
  return edges.map(checkEdge).filter((v): v is Violation => v !== undefined);
}
