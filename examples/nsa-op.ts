// The standalone NSA op from your own code: random inputs through forward and backward.
// Run: node scripts/run-node.mjs examples/nsa-op.ts   (NSA_GPU=software forces SwiftShader)
// 'nsa-playground' resolves to src/index.ts through package.json's exports (tsx, Vite, Vitest, tsc).
import { acquireNodeGpu, type NsaConfig, NsaOp, type NsaOpShape } from 'nsa-playground';

/** A small seeded generator (mulberry32) and standard normals, so the run is reproducible. */
function randn(n: number, seed: number, scale = 1): Float32Array {
  let s = seed >>> 0;
  const u = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 0.5) / 4294967296;
  };
  return Float32Array.from({ length: n }, () => scale * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u()));
}

const norm = (a: Float32Array) => Math.sqrt(a.reduce((acc, v) => acc + v * v, 0));

async function main(): Promise<void> {
  const shape: NsaOpShape = { B: 2, T: 64, H: 4, G: 2, dk: 16, dv: 16 };
  const cfg: NsaConfig = { l: 8, d: 4, lSel: 16, nSel: 3, w: 16, phi: 'avg', forceInit: true, forceLocal: 1 };
  const { B, T, H, G, dk, dv } = shape;
  const gpu = await acquireNodeGpu();
  const op = await NsaOp.create(gpu, shape, cfg); // validates, allocates, compiles once
  try {
    const kv = (D: number, seed: number) => randn(B * T * G * D, seed);
    const x = {
      q: randn(B * T * H * dk, 1, 2),
      kCmp: kv(dk, 2),
      vCmp: kv(dv, 3),
      kSel: kv(dk, 4),
      vSel: kv(dv, 5),
      kWin: kv(dk, 6),
      vWin: kv(dv, 7),
      gates: randn(B * T * H * 3, 8).map((z) => 1 / (1 + Math.exp(-z))), // sigmoids of random logits
    };
    const dout = randn(B * T * H * dv, 9); // dL/dout
    await op.forward(x); // first calls: some drivers finish compiling here
    await op.backward(dout);
    const t0 = performance.now();
    const f = await op.forward(x);
    const t1 = performance.now();
    const g = await op.backward(dout);
    const t2 = performance.now();

    console.log(`NSA op ${JSON.stringify(shape)} ${JSON.stringify(cfg)}`);
    console.log(
      `forward ${(t1 - t0).toFixed(1)} ms, backward ${(t2 - t1).toFixed(1)} ms (each: upload, one submit, readback; ${gpu.adapter.software ? 'software adapter' : gpu.adapter.architecture})`,
    );
    console.log(
      `‖out‖ = ${norm(f.out).toFixed(6)}  (‖oCmp‖ = ${norm(f.oCmp).toFixed(4)}, ‖oSel‖ = ${norm(f.oSel).toFixed(4)}, ‖oWin‖ = ${norm(f.oWin).toFixed(4)})`,
    );
    for (let b = 0; b < B; b++) {
      for (let gr = 0; gr < G; gr++) {
        const row = ((b * T + T - 1) * G + gr) * cfg.nSel;
        const blocks = Array.from(f.selection.subarray(row, row + cfg.nSel)).filter((j) => j >= 0);
        console.log(
          `selection b=${b} t=${T - 1} group ${gr}: blocks [${blocks.join(', ')}] → tokens ${blocks.map((j) => `[${j * cfg.lSel}, ${Math.min((j + 1) * cfg.lSel, T)})`).join(' ')}`,
        );
      }
    }
    for (const [name, a] of Object.entries(g)) console.log(`‖${name}‖ = ${norm(a).toFixed(6)}`);
  } finally {
    op.destroy();
    gpu.destroy();
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  },
);
