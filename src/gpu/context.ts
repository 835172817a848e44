// The one GPU abstraction every layer above uses, in the browser and in Node alike. It counts
// buffer creations and queue submits (the tests assert a training step creates no buffer and
// submits once), caches pipelines, and turns device loss / uncaptured errors into reports.
import type { BufferSlice } from './arena';
import { sourceLocation, type SourceRange } from './kernel-interface';
import { UniformPool, type UniformSlot, type UniformWord } from './uniforms';

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for a software adapter (SwiftShader / fallback). */
  software: boolean;
  /** 'browser' or 'node (dawn)'. */
  runtime: string;
  features: string[];
  limits: Record<string, number>;
  /**
   * SMs (compute units, cores) where known: WebGPU does not report it; npm run gpu:plan's stand-in
   * sets the named GPU's. src/gpu/compute-units.ts reads it (or estimates it) for kernels that
   * split work to fill the GPU.
   */
  computeUnits?: number;
}

export interface PipelineDesc {
  /** WGSL source (imported with `?raw`). */
  code: string;
  entryPoint: string;
  /** Override constants, e.g. workgroup sizes. */
  constants?: Record<string, number>;
  label?: string;
  /** Where each line range of `code` came from (defineKernel): compile errors name file and line. */
  sourceMap?: readonly SourceRange[];
}

/** One recorded compute dispatch: built at init, encoded every step. */
export interface Dispatch {
  readonly label: string;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroup: GPUBindGroup;
  readonly workgroups: readonly [number, number, number];
}

export type Binding = BufferSlice | UniformSlot;

export interface GpuReport {
  kind: 'device-lost' | 'validation' | 'out-of-memory' | 'internal';
  message: string;
}

export interface GpuCounters {
  buffersCreated: number;
  submits: number;
}

/** A WGSL compile error; `messages` are located in the source files where a source map was given. */
export class ShaderCompileError extends Error {
  override name = 'ShaderCompileError';
  constructor(
    readonly label: string,
    readonly messages: readonly string[],
  ) {
    super(`pipeline ${label}: shader compilation failed:\n${messages.join('\n')}`);
  }
}

/** `shaders/x.wgsl:12:5: error: ...` (or `line 12:5` without a source map). */
export function formatCompilationMessage(m: GPUCompilationMessage, sourceMap?: readonly SourceRange[]): string {
  const where = sourceMap ? sourceLocation(sourceMap, m.lineNum) : `line ${m.lineNum}`;
  return `${where}:${m.linePos}: ${m.type}: ${m.message}`;
}

export class GpuContext {
  readonly counters: GpuCounters = { buffersCreated: 0, submits: 0 };
  readonly reports: GpuReport[] = [];
  /** Resolves when the device is lost (destroy() included), with the reason. */
  readonly lost: Promise<GpuReport>;
  readonly hasTimestamps: boolean;
  private readonly modules = new Map<string, Promise<GPUShaderModule>>();
  private readonly pipelines = new Map<string, Promise<GPUComputePipeline>>();
  private readonly uniforms: UniformPool;
  private readonly listeners = new Set<(r: GpuReport) => void>();
  private destroyed = false;

  constructor(
    readonly device: GPUDevice,
    readonly adapter: AdapterSummary,
  ) {
    this.hasTimestamps = device.features.has('timestamp-query');
    this.uniforms = new UniformPool(device, (d) => this.createBuffer(d));
    this.lost = device.lost.then((info) => {
      const r: GpuReport = { kind: 'device-lost', message: `GPU device lost (${info.reason}): ${info.message}` };
      if (!this.destroyed) this.report(r);
      return r;
    });
    device.addEventListener('uncapturederror', (ev) => {
      const err = (ev as GPUUncapturedErrorEvent).error;
      const kind: GpuReport['kind'] =
        err instanceof GPUOutOfMemoryError ? 'out-of-memory' : err instanceof GPUValidationError ? 'validation' : 'internal';
      this.report({ kind, message: err.message });
    });
  }

  get limits(): GPUSupportedLimits {
    return this.device.limits;
  }

  /** Subscribe to device loss and uncaptured errors; returns an unsubscribe function. */
  onReport(cb: (r: GpuReport) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private report(r: GpuReport): void {
    this.reports.push(r);
    for (const cb of this.listeners) cb(r);
  }

  createBuffer(desc: GPUBufferDescriptor): GPUBuffer {
    this.counters.buffersCreated++;
    return this.device.createBuffer(desc);
  }

  submit(commands: GPUCommandBuffer[]): void {
    this.counters.submits++;
    this.device.queue.submit(commands);
  }

  uniform(words: readonly UniformWord[]): UniformSlot {
    return this.uniforms.alloc(words);
  }

  /**
   * The shader module of `code`, compiled once. A compile error (caught in an error scope, not
   * reported as an uncaptured error) rejects with the compiler's messages, each located as
   * `shaders/<file>.wgsl:<line>:<column>` through the source map when there is one.
   */
  private module(code: string, label: string, sourceMap?: readonly SourceRange[]): Promise<GPUShaderModule> {
    let m = this.modules.get(code);
    if (!m) {
      this.device.pushErrorScope('validation');
      const module = this.device.createShaderModule({ code, label });
      const scope = this.device.popErrorScope();
      m = scope.then(async (err) => {
        if (!err) return module;
        let info: GPUCompilationInfo | undefined;
        try {
          info = await module.getCompilationInfo();
        } catch {
          info = undefined;
        }
        const msgs = (info?.messages ?? []).filter((x) => x.type === 'error');
        throw new ShaderCompileError(label, msgs.length ? msgs.map((x) => formatCompilationMessage(x, sourceMap)) : [err.message]);
      });
      m.catch(() => undefined); // the pipeline promise carries the rejection
      this.modules.set(code, m);
    }
    return m;
  }

  /** Cached compute pipeline; rejects with the compiler's message on a bad shader. */
  pipeline(desc: PipelineDesc): Promise<GPUComputePipeline> {
    const constants = desc.constants ?? {};
    const key = `${desc.entryPoint}|${JSON.stringify(Object.entries(constants).sort())}|${desc.code}`;
    let p = this.pipelines.get(key);
    if (!p) {
      const label = desc.label ?? desc.entryPoint;
      p = this.module(desc.code, label, desc.sourceMap)
        .then((module) =>
          this.device.createComputePipelineAsync({ label, layout: 'auto', compute: { module, entryPoint: desc.entryPoint, constants } }),
        )
        .catch((e: unknown) => {
          if (e instanceof ShaderCompileError) throw new ShaderCompileError(label, e.messages);
          throw new Error(`pipeline ${label}: ${e instanceof Error ? e.message : String(e)}`);
        });
      this.pipelines.set(key, p);
    }
    return p;
  }

  /** Bind group 0 with binding i = bindings[i]. */
  bindGroup(pipeline: GPUComputePipeline, bindings: readonly Binding[], label?: string): GPUBindGroup {
    return this.device.createBindGroup({
      label,
      layout: pipeline.getBindGroupLayout(0),
      entries: bindings.map((b, i) => ({ binding: i, resource: { buffer: b.buffer, offset: b.offset, size: b.size } })),
    });
  }

  /** Builds a dispatch record (pipeline from cache, bind group now). */
  async dispatch(desc: PipelineDesc, bindings: readonly Binding[], workgroups: readonly [number, number?, number?]): Promise<Dispatch> {
    const pipeline = await this.pipeline(desc);
    const wg = [workgroups[0], workgroups[1] ?? 1, workgroups[2] ?? 1] as const;
    const max = this.device.limits.maxComputeWorkgroupsPerDimension;
    for (const n of wg) {
      if (!Number.isInteger(n) || n < 0 || n > max)
        throw new Error(`${desc.label ?? desc.entryPoint}: workgroup count ${n} outside [0, ${max}]`);
    }
    return { label: desc.label ?? desc.entryPoint, pipeline, bindGroup: this.bindGroup(pipeline, bindings, desc.label), workgroups: wg };
  }

  /** Encodes dispatches into an open compute pass, in order. */
  static encode(pass: GPUComputePassEncoder, dispatches: readonly Dispatch[]): void {
    for (const d of dispatches) {
      if (d.workgroups[0] * d.workgroups[1] * d.workgroups[2] === 0) continue;
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
    }
  }

  /** Runs dispatches in one pass and one submit (tests, one-off work). */
  run(dispatches: readonly Dispatch[]): void {
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    GpuContext.encode(pass, dispatches);
    pass.end();
    this.submit([enc.finish()]);
  }

  write(slice: BufferSlice, data: ArrayBufferView | ArrayBuffer, byteOffset = 0): void {
    const view = (
      data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    ) as Uint8Array<ArrayBuffer>;
    if (byteOffset + view.byteLength > slice.size)
      throw new Error(`write of ${view.byteLength} bytes at ${byteOffset} overflows a ${slice.size}-byte slice`);
    this.device.queue.writeBuffer(slice.buffer, slice.offset + byteOffset, view);
  }

  /** Reads a slice back (allocates a staging buffer: not for the training step). */
  async read(slice: BufferSlice, bytes = slice.size): Promise<ArrayBuffer> {
    const size = Math.ceil(bytes / 4) * 4;
    const staging = this.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(slice.buffer, slice.offset, staging, 0, size);
    this.submit([enc.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    const out = staging.getMappedRange().slice(0, bytes);
    staging.unmap();
    staging.destroy();
    return out;
  }

  async readF32(slice: BufferSlice, count = slice.size / 4): Promise<Float32Array> {
    return new Float32Array(await this.read(slice, count * 4));
  }

  async readI32(slice: BufferSlice, count = slice.size / 4): Promise<Int32Array> {
    return new Int32Array(await this.read(slice, count * 4));
  }

  /** Waits for all submitted work, failing on any error reported meanwhile. */
  async finish(): Promise<void> {
    await this.device.queue.onSubmittedWorkDone();
  }

  destroy(): void {
    this.destroyed = true;
    this.device.destroy();
  }
}

/** Device limits to request: everything the adapter offers (defaults are far smaller). */
export function adapterLimits(adapter: GPUAdapter): Record<string, number> {
  const out: Record<string, number> = {};
  const limits = adapter.limits as unknown as Record<string, number>;
  for (const key in limits) {
    const v = limits[key];
    if (typeof v === 'number') out[key] = v;
  }
  return out;
}

export async function contextFromAdapter(adapter: GPUAdapter, runtime: string): Promise<GpuContext> {
  const wanted: GPUFeatureName[] = ['timestamp-query'];
  const requiredFeatures = wanted.filter((f) => adapter.features.has(f));
  const limits = adapterLimits(adapter);
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits: limits, label: 'nsa-playground' });
  const info = adapter.info;
  const arch = info.architecture || '';
  const software =
    /swiftshader|llvmpipe|lavapipe|software/i.test(`${arch} ${info.description} ${info.device}`) ||
    (info as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
  const summary: AdapterSummary = {
    vendor: info.vendor || 'unknown',
    architecture: arch || 'unknown',
    device: info.device || '',
    description: info.description || '',
    software,
    runtime,
    features: [...adapter.features].sort(),
    limits,
  };
  return new GpuContext(device, summary);
}

export function describeAdapter(a: AdapterSummary): string {
  const name = [a.vendor, a.architecture, a.description || a.device].filter((s) => s && s !== 'unknown').join(' / ');
  return `${name || 'unknown adapter'}${a.software ? ' (software)' : ''} via ${a.runtime}`;
}
