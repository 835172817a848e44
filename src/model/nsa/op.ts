// The standalone NSA op for researchers' own code (Node or browser): host arrays in, host arrays
// out. It owns one arena for its inputs, outputs and gradients, binds the NSA core to it once
// (op-bind.ts) and reads results through one staging buffer made at create: forward and backward
// each write their inputs, submit once and map once, creating no GPU object.
// For data that stays on the GPU, use `op.tensors` + `op.binding` (write the slices, encode the
// dispatch lists yourself) or `NsaOp.bind` on your own slices.
import type { NsaConfig } from '../../definitions/nsa-config';
import type { AttentionShape } from '../../definitions/shapes';
import { type Arena, type BufferSlice, createLayoutArena, type PlaceTensor } from '../../gpu/arena';
import { type Dispatch, GpuContext } from '../../gpu/context';
import {
  assertNsaOp,
  bindNsaOp,
  type NsaOpBindArgs,
  type NsaOpBinding,
  type NsaOpGradSlices,
  type NsaOpInputSlices,
  nsaOpTensorSizes,
} from './op-bind';

export interface NsaOpInputs {
  /** [B,T,H,dk], RoPE already applied if wanted. */
  q: Float32Array;
  /** [B,T,G,dk] each (the op applies no RoPE). */
  kCmp: Float32Array;
  kSel: Float32Array;
  kWin: Float32Array;
  /** [B,T,G,dv] each. */
  vCmp: Float32Array;
  vSel: Float32Array;
  vWin: Float32Array;
  /** [B,T,H,3] gate values (cmp, sel, win), typically sigmoids in [0, 1]. */
  gates: Float32Array;
}

export interface NsaOpForward {
  /** [B,T,H,dv] = Σ_c g_c·O_c. */
  out: Float32Array;
  /** [B,T,G,nSel] selected block indices, ascending, −1 padded. */
  selection: Int32Array;
  /** Per-branch outputs [B,T,H,dv] (oCmp is 0 where no compressed block is visible yet). */
  oCmp: Float32Array;
  oSel: Float32Array;
  oWin: Float32Array;
}

export interface NsaOpGrads {
  /** Same layouts as the inputs; dgates is wrt the gate values. */
  dq: Float32Array;
  dkCmp: Float32Array;
  dvCmp: Float32Array;
  dkSel: Float32Array;
  dvSel: Float32Array;
  dkWin: Float32Array;
  dvWin: Float32Array;
  dgates: Float32Array;
}

export interface NsaOpTensors {
  inputs: NsaOpInputSlices;
  out: BufferSlice;
  grads: NsaOpGradSlices;
}

const INPUTS = ['q', 'kCmp', 'vCmp', 'kSel', 'vSel', 'kWin', 'vWin', 'gates'] as const;
const GRADS = ['dq', 'dkCmp', 'dvCmp', 'dkSel', 'dvSel', 'dkWin', 'dvWin', 'dgates'] as const;

export class NsaOp {
  private chain: Promise<unknown> = Promise.resolve();
  private hasForward = false;
  private destroyed = false;

  private constructor(
    readonly gpu: GpuContext,
    readonly shape: Readonly<AttentionShape>,
    readonly cfg: Readonly<NsaConfig>,
    /** The op's device tensors: write inputs / dout here when driving `binding` yourself. */
    readonly tensors: NsaOpTensors,
    /** Prebuilt forward and backward dispatch lists over `tensors`. */
    readonly binding: NsaOpBinding,
    private readonly arena: Arena,
    private readonly staging: GPUBuffer,
  ) {}

  /** Lower-level form: the op on caller-owned device tensors (see op-bind.ts). */
  static bind(gpu: GpuContext, shape: AttentionShape, cfg: NsaConfig, args: NsaOpBindArgs): Promise<NsaOpBinding> {
    return bindNsaOp(gpu, shape, cfg, args);
  }

  /**
   * Validates shape and config (NsaOpConfigError naming the fields, before any GPU work), then
   * allocates everything once and compiles the pipelines.
   */
  static async create(gpu: GpuContext, shape: AttentionShape, cfg: NsaConfig): Promise<NsaOp> {
    assertNsaOp(shape, cfg);
    const s: AttentionShape = { B: shape.B, T: shape.T, H: shape.H, G: shape.G, dk: shape.dk, dv: shape.dv };
    const c: NsaConfig = { ...cfg };
    const z = nsaOpTensorSizes(s, c);
    // One tensor per key of the size tables, named by its key: inputs, the output, the gradients.
    const placeEach = <K extends string>(place: PlaceTensor, sizes: Record<K, number>) =>
      Object.fromEntries((Object.keys(sizes) as K[]).map((k) => [k, place(k, sizes[k])])) as Record<K, BufferSlice>;
    const { arena, tensors } = createLayoutArena(gpu, 'nsa-op.io', (place): NsaOpTensors => ({
      inputs: placeEach(place, z.inputs),
      out: place('out', z.out),
      grads: placeEach(place, z.grads),
    }));
    let binding: NsaOpBinding;
    try {
      binding = await bindNsaOp(gpu, s, c, tensors);
    } catch (e) {
      arena.buffers.forEach((b) => b.destroy());
      throw e;
    }
    const fwdBytes = 4 * (3 * z.out + z.out + z.selection);
    const bwdBytes = 4 * GRADS.reduce((acc, k) => acc + z.grads[k], 0);
    const staging = gpu.createBuffer({
      label: 'nsa-op.staging',
      size: Math.ceil(Math.max(fwdBytes, bwdBytes) / 8) * 8,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    return new NsaOp(gpu, Object.freeze(s), Object.freeze(c), tensors, binding, arena, staging);
  }

  /** Runs the forward on host inputs (lengths checked by name). Calls are serialised. */
  forward(x: NsaOpInputs): Promise<NsaOpForward> {
    return this.serial(async () => {
      const z = nsaOpTensorSizes(this.shape, this.cfg);
      for (const k of INPUTS) this.checkLength(k, x[k], z.inputs[k]);
      const sv = this.binding.saved;
      const parts = await this.run(() => INPUTS.forEach((k) => this.gpu.write(this.tensors.inputs[k], x[k])), this.binding.forward, [
        [this.tensors.out, z.out],
        [sv.sel, z.selection],
        [sv.oCmp, z.out],
        [sv.oSel, z.out],
        [sv.oWin, z.out],
      ]);
      this.hasForward = true;
      const [out, sel, oCmp, oSel, oWin] = parts;
      return {
        out: new Float32Array(out),
        selection: new Int32Array(sel),
        oCmp: new Float32Array(oCmp),
        oSel: new Float32Array(oSel),
        oWin: new Float32Array(oWin),
      };
    });
  }

  /** Gradients of every input given dout [B,T,H,dv], for the inputs of the last forward. */
  backward(dout: Float32Array): Promise<NsaOpGrads> {
    return this.serial(async () => {
      if (!this.hasForward) throw new Error('NsaOp.backward: call forward first (the backward is of the last forward)');
      const z = nsaOpTensorSizes(this.shape, this.cfg);
      this.checkLength('dout', dout, z.grads.dout);
      const g = this.tensors.grads;
      const parts = await this.run(
        () => this.gpu.write(g.dout, dout),
        this.binding.backward,
        GRADS.map((k) => [g[k], z.grads[k]] as [BufferSlice, number]),
      );
      return Object.fromEntries(GRADS.map((k, i) => [k, new Float32Array(parts[i])])) as unknown as NsaOpGrads;
    });
  }

  /** Frees the op's buffers; the op cannot be used afterwards. Idempotent. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.binding.destroy();
    this.arena.buffers.forEach((b) => b.destroy());
    this.staging.destroy();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(() => {
      if (this.destroyed) throw new Error('NsaOp: used after destroy()');
      return fn();
    });
    this.chain = p.catch(() => undefined);
    return p;
  }

  private checkLength(name: string, a: ArrayLike<number> | undefined, n: number): void {
    if (!(a instanceof Float32Array)) throw new Error(`NsaOp: ${name} must be a Float32Array`);
    if (a.length !== n) {
      const { B, T, H, G, dk, dv } = this.shape;
      throw new Error(`NsaOp: ${name} has ${a.length} values, expected ${n} (B=${B}, T=${T}, H=${H}, G=${G}, dk=${dk}, dv=${dv})`);
    }
  }

  /**
   * Writes, encodes the dispatches and copies `reads` into the staging buffer in one submit, maps
   * it and returns a copy of each read. GPU validation errors become exceptions.
   */
  private async run(write: () => void, dispatches: readonly Dispatch[], reads: Array<[BufferSlice, number]>): Promise<ArrayBuffer[]> {
    const device = this.gpu.device;
    device.pushErrorScope('validation');
    write();
    const enc = device.createCommandEncoder({ label: 'nsa-op' });
    const pass = enc.beginComputePass();
    GpuContext.encode(pass, dispatches);
    pass.end();
    const offsets: number[] = [];
    let bytes = 0;
    for (const [slice, n] of reads) {
      offsets.push(bytes);
      if (n > 0) enc.copyBufferToBuffer(slice.buffer, slice.offset, this.staging, bytes, 4 * n);
      bytes += 4 * n;
    }
    this.gpu.submit([enc.finish()]);
    const error = device.popErrorScope();
    await this.staging.mapAsync(GPUMapMode.READ, 0, Math.ceil(bytes / 8) * 8);
    const all = this.staging.getMappedRange(0, Math.ceil(bytes / 8) * 8).slice(0);
    this.staging.unmap();
    const err = await error;
    if (err) throw new Error(`NsaOp: GPU validation error: ${err.message}`);
    return reads.map(([, n], i) => all.slice(offsets[i], offsets[i] + 4 * n));
  }
}
