// Import direction: every import in src/ follows the layer order of tests/architecture/layers.ts.
// The checker itself is tested on planted reverse imports, so a broken checker cannot pass.
import { describe, expect, it } from 'vitest';

import { checkEdge, importEdges, importsOf, LAYERS, ORACLE_ALLOWED, sourceFiles, unitOf, violations } from './layers';

const root = process.cwd();

describe('layer order of src/', () => {
  it('every top-level unit of src/ has a layer', () => {
    const units = new Set(sourceFiles(root).map((f) => unitOf(f)!));
    const unknown = [...units].filter((u) => !(u in LAYERS) && u !== 'reference');
    expect(unknown).toEqual([]);
  });

  it('no import runs against the order (definitions → gpu → kernels → model → train/decode → bench → worker/cli → ui; reference imports only the bottom)', () => {
    const edges = importEdges(root);
    expect(edges.length).toBeGreaterThan(300); // the scan found the imports
    const bad = violations(edges).map((v) => `${v.from} → ${v.to}: ${v.rule}`);
    expect(bad).toEqual([]);
  });

  it('each allowed oracle import exists (a stale exception is removed, not kept)', () => {
    const edges = importEdges(root);
    for (const a of ORACLE_ALLOWED)
      expect(
        edges.some((e) => e.from === a.from && e.to === a.to),
        `${a.from} → ${a.to}`,
      ).toBe(true);
  });
});

describe('the checker fails on planted reverse imports', () => {
  const planted = (from: string, spec: string) => importsOf(from, `import { x } from '${spec}';\n`).map((to) => ({ from, to }));

  it('kernels importing the model', () => {
    const v = violations(planted('src/kernels/matmul.ts', '../model/plan'));
    expect(v).toHaveLength(1);
    expect(v[0].rule).toMatch(/kernels \(layer 2\) imports model \(layer 3\)/);
  });

  it('definitions importing gpu, gpu importing kernels, train importing worker, worker importing ui, train and decode importing each other', () => {
    for (const [from, spec] of [
      ['src/definitions/params.ts', '../gpu/arena'],
      ['src/gpu/context.ts', '../kernels/matmul'],
      ['src/train/trainer.ts', '../worker/run'],
      ['src/worker/run.ts', '../ui/store'],
      ['src/train/trainer.ts', '../decode/generate'],
      ['src/decode/generate.ts', '../train/loop'],
    ] as const)
      expect(violations(planted(from, spec)), `${from} → ${spec}`).toHaveLength(1);
  });

  it('siblings: cli ↔ worker', () => {
    expect(violations(planted('src/cli/train.ts', '../worker/run'))[0].rule).toMatch(/siblings/);
    expect(violations(planted('src/worker/run.ts', '../cli/args'))[0].rule).toMatch(/siblings/);
  });

  it('the reference importing the GPU side, and production importing the reference', () => {
    expect(violations(planted('src/reference/model.ts', '../model/plan'))[0].rule).toMatch(/reference imports only the bottom/);
    expect(violations(planted('src/model/plan.ts', '../reference/model'))[0].rule).toMatch(/does not import the float64 reference/);
    expect(violations(planted('src/ui/store.ts', '../reference/decoder'))).toHaveLength(1);
  });

  it('type-only imports, re-exports and dynamic imports count too', () => {
    const text = "import type { A } from '../model/plan';\nexport { B } from '../train/trainer';\nconst m = await import('../ui/store');\n";
    const edges = importsOf('src/kernels/x.ts', text).map((to) => ({ from: 'src/kernels/x.ts', to }));
    expect(violations(edges)).toHaveLength(3);
  });

  it('downward and same-folder imports pass; shader sources are not a layer', () => {
    expect(checkEdge({ from: 'src/model/plan.ts', to: 'src/kernels/matmul.ts' })).toBeUndefined();
    expect(checkEdge({ from: 'src/model/plan.ts', to: 'src/model/activations.ts' })).toBeUndefined();
    expect(checkEdge({ from: 'src/kernels/matmul.ts', to: 'shaders/matmul.wgsl' })).toBeUndefined();
    expect(checkEdge({ from: 'src/reference/model.ts', to: 'src/definitions/params.ts' })).toBeUndefined();
  });
});
