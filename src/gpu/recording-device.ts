// A recording stand-in for a WebGPU device: the real plan and decoder code builds its dispatches
// against it without a GPU (npm run gpu:plan, fast-tier tests), and each Dispatch it returns can be
// described — its kernel composition, entry point, workgroup size (from the composed WGSL's
// @workgroup_size, override constants applied), grid, uniform values by field name and storage
// bindings by name and bytes. Nothing runs: buffers hold no data (except uniform buffers, whose
// writes are kept so the uniforms can be read back), and encoding or submitting work throws.
// tests/model/recording-device.test.ts checks that a plan and a decoder built on it record the
// same labels and grids as the same ones built on the real adapter.
import { type AdapterSummary, type Dispatch, GpuContext } from './context';

/** WebGPU's buffer usage and map mode bits (the spec's values), for Node without Dawn loaded. */
const BUFFER_USAGE = {
  MAP_READ: 1,
  MAP_WRITE: 2,
  COPY_SRC: 4,
  COPY_DST: 8,
  INDEX: 16,
  VERTEX: 32,
  UNIFORM: 64,
  STORAGE: 128,
  INDIRECT: 256,
  QUERY_RESOLVE: 512,
} as const;
const MAP_MODE = { READ: 1, WRITE: 2 } as const;

/** The adapter a recording device stands for: what the code paths that depend on it read. */
export interface RecordedAdapter {
  summary: AdapterSummary;
}

/**
 * The H200's adapter as Dawn reported it in the first GPU run (docs/gpu-runs/2026-11-27-h200.json):
 * a hardware NVIDIA adapter, so the kernels pick their GPU variants and tilings.
 */
export const NVIDIA_ADAPTER: AdapterSummary = {
  vendor: 'nvidia',
  architecture: 'unknown',
  device: 'recording stand-in (NVIDIA limits of docs/gpu-runs/2026-11-27-h200.json)',
  description: 'NVIDIA (recording stand-in)',
  software: false,
  runtime: 'recording (no GPU)',
  features: ['subgroups', 'timestamp-query'],
  limits: {
    maxBufferSize: 2147483644,
    maxStorageBufferBindingSize: 2147483644,
    maxStorageBuffersPerShaderStage: 16,
    minStorageBufferOffsetAlignment: 16,
    maxComputeWorkgroupStorageSize: 49152,
    maxComputeInvocationsPerWorkgroup: 1024,
    maxComputeWorkgroupSizeX: 1024,
    maxComputeWorkgroupSizeY: 1024,
    maxComputeWorkgroupSizeZ: 64,
    maxComputeWorkgroupsPerDimension: 65535,
  },
};

interface FakeBuffer {
  readonly label: string;
  readonly size: number;
  readonly usage: number;
  /** Uniform buffers only: the bytes written. */
  readonly data?: Uint8Array;
  destroy(): void;
}

interface PipelineInfo {
  kernel: string;
  entryPoint: string;
  code: string;
  constants: Record<string, number>;
  workgroupSize: [number, number, number];
}

interface BindEntry {
  binding: number;
  buffer: FakeBuffer;
  offset: number;
  size: number;
}

/** What a recorded dispatch is, read from its pipeline and bind group. */
export interface RecordedDispatch {
  label: string;
  /** The kernel composition (defineKernel's name, e.g. 'matmul') and its entry point. */
  kernel: string;
  entryPoint: string;
  workgroups: readonly [number, number, number];
  workgroupSize: readonly [number, number, number];
  /** Override constants the pipeline was built with. */
  constants: Readonly<Record<string, number>>;
  /** Uniform values by WGSL variable, then field name (as the generated header declares them). */
  uniforms: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /**
   * Storage bindings in binding order: the name(s) the kernel declares at that index (entry points
   * of one composition may name an index differently: then 'a|b') and the bytes bound.
   */
  storage: ReadonlyArray<{ name: string; bytes: number }>;
}

const refuse = (what: string) => () => {
  throw new Error(`recording device: ${what} (it records dispatches and runs nothing)`);
};

/** Integer evaluation of a WGSL constant expression over names (`4u * R * WGY`, `256 / L`). */
export function evalWgslInt(expr: string, names: (name: string) => number): number {
  const tokens = expr.match(/\d+[ui]?|[A-Za-z_]\w*|[-+*/()]/g) ?? [];
  if (tokens.join('').replace(/\s/g, '') !== expr.replace(/\s/g, '')) throw new Error(`cannot evaluate WGSL expression '${expr}'`);
  let i = 0;
  const primary = (): number => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`cannot evaluate WGSL expression '${expr}': it ends early`);
    if (t === '(') {
      const v = sum();
      if (tokens[i++] !== ')') throw new Error(`cannot evaluate WGSL expression '${expr}': unbalanced parentheses`);
      return v;
    }
    if (t === '-') return -primary();
    if (/^\d/.test(t)) return parseInt(t, 10);
    return names(t);
  };
  const product = (): number => {
    let v = primary();
    while (tokens[i] === '*' || tokens[i] === '/') {
      const op = tokens[i++];
      const r = primary();
      v = op === '*' ? v * r : Math.trunc(v / r);
    }
    return v;
  };
  const sum = (): number => {
    let v = product();
    while (tokens[i] === '+' || tokens[i] === '-') {
      const op = tokens[i++];
      const r = product();
      v = op === '+' ? v + r : v - r;
    }
    return v;
  };
  const v = sum();
  if (i !== tokens.length) throw new Error(`cannot evaluate WGSL expression '${expr}'`);
  return v;
}

/** The @workgroup_size of `entryPoint` in composed WGSL `code`, override `constants` applied. */
export function workgroupSizeOf(code: string, entryPoint: string, constants: Readonly<Record<string, number>>): [number, number, number] {
  const m = new RegExp(`@workgroup_size\\(([^)]*)\\)\\s*fn\\s+${entryPoint}\\s*\\(`).exec(code);
  if (!m) throw new Error(`recording device: no @workgroup_size for entry point ${entryPoint}`);
  const decls = new Map<string, string | undefined>();
  for (const d of code.matchAll(/^\s*(?:const|override)\s+([A-Za-z_]\w*)\s*(?::\s*\w+)?\s*(?:=\s*([^;]+))?;/gm)) decls.set(d[1], d[2]);
  const names = (name: string): number => {
    if (name in constants) return constants[name];
    const e = decls.get(name);
    if (e === undefined) throw new Error(`recording device: ${entryPoint}'s workgroup size needs ${name}, which has no value`);
    return evalWgslInt(e, names);
  };
  const dims = m[1]
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => evalWgslInt(s, names));
  return [dims[0], dims[1] ?? 1, dims[2] ?? 1];
}

/** Uniform fields per struct and the uniform/storage variable of each binding index, from the generated header. */
function parseHeader(code: string): {
  structs: Map<string, Array<[string, string]>>;
  bindings: Map<number, { name: string; uniform?: string }>;
} {
  const structs = new Map<string, Array<[string, string]>>();
  for (const s of code.matchAll(/struct\s+(\w+)\s*\{([^}]*)\}/g)) {
    const fields = [...s[2].matchAll(/^\s*(\w+)\s*:\s*(u32|i32|f32)\s*,/gm)].map((f): [string, string] => [f[1], f[2]]);
    structs.set(s[1], fields);
  }
  const bindings = new Map<number, { name: string; uniform?: string }>();
  for (const b of code.matchAll(/@group\(0\)\s*@binding\((\d+)\)\s*var<(uniform|storage[^>]*)>\s*(\w+)\s*:\s*([^;]+);/g)) {
    const i = Number(b[1]);
    const prev = bindings.get(i);
    bindings.set(i, { name: prev ? `${prev.name}|${b[3]}` : b[3], uniform: b[2] === 'uniform' ? b[4].trim() : undefined });
  }
  return { structs, bindings };
}

/** A GpuContext whose device records instead of running. */
export class RecordingGpu {
  readonly gpu: GpuContext;
  private readonly pipelines = new WeakMap<object, PipelineInfo>();
  private readonly groups = new WeakMap<object, BindEntry[]>();

  constructor(adapter: AdapterSummary = NVIDIA_ADAPTER) {
    const g = globalThis as Record<string, unknown>;
    g.GPUBufferUsage ??= BUFFER_USAGE;
    g.GPUMapMode ??= MAP_MODE;
    const pipelines = this.pipelines;
    const groups = this.groups;
    const device = {
      features: new Set(adapter.features),
      limits: { ...adapter.limits },
      lost: new Promise<never>(() => undefined),
      label: 'recording',
      addEventListener: () => undefined,
      pushErrorScope: () => undefined,
      popErrorScope: () => Promise.resolve(null),
      createBuffer: (d: GPUBufferDescriptor): FakeBuffer => ({
        label: d.label ?? '',
        size: d.size,
        usage: d.usage,
        data: d.usage & BUFFER_USAGE.UNIFORM ? new Uint8Array(d.size) : undefined,
        destroy: () => undefined,
      }),
      createShaderModule: (d: { code: string; label?: string }) => ({
        code: d.code,
        label: d.label,
        getCompilationInfo: () => ({ messages: [] }),
      }),
      createComputePipelineAsync: (d: {
        compute: { module: { code: string }; entryPoint: string; constants?: Record<string, number> };
      }) => {
        const { code } = d.compute.module;
        const constants = { ...(d.compute.constants ?? {}) };
        const kernel = /for kernel ([\w.-]+):/.exec(code)?.[1] ?? '?';
        const workgroupSize = workgroupSizeOf(code, d.compute.entryPoint, constants);
        const pipeline = { getBindGroupLayout: () => ({}) };
        pipelines.set(pipeline, { kernel, entryPoint: d.compute.entryPoint, code, constants, workgroupSize });
        return Promise.resolve(pipeline);
      },
      createBindGroup: (d: { entries: Array<{ binding: number; resource: { buffer: FakeBuffer; offset?: number; size?: number } }> }) => {
        const group = {};
        groups.set(
          group,
          d.entries.map((e) => ({
            binding: e.binding,
            buffer: e.resource.buffer,
            offset: e.resource.offset ?? 0,
            size: e.resource.size ?? e.resource.buffer.size,
          })),
        );
        return group;
      },
      queue: {
        writeBuffer: (buffer: FakeBuffer, offset: number, data: ArrayBufferView) => {
          if (buffer.data) buffer.data.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), offset);
        },
        submit: refuse('submit'),
        onSubmittedWorkDone: () => Promise.resolve(),
      },
      createCommandEncoder: refuse('createCommandEncoder'),
      createQuerySet: refuse('createQuerySet'),
      destroy: () => undefined,
    };
    this.gpu = new GpuContext(device as unknown as GPUDevice, adapter);
  }

  /** What dispatch `d` (built on this device) is. */
  describe(d: Dispatch): RecordedDispatch {
    const p = this.pipelines.get(d.pipeline);
    const entries = this.groups.get(d.bindGroup);
    if (!p || !entries) throw new Error(`recording device: dispatch ${d.label} was not built on this device`);
    const { structs, bindings } = parseHeader(p.code);
    const uniforms: Record<string, Record<string, number>> = {};
    const storage: Array<{ name: string; bytes: number }> = [];
    for (const e of entries) {
      const b = bindings.get(e.binding);
      if (!b) throw new Error(`recording device: ${d.label} binds @binding(${e.binding}), which ${p.kernel} does not declare`);
      if (b.uniform) {
        const fields = structs.get(b.uniform) ?? [];
        const data = e.buffer.data;
        if (!data) throw new Error(`recording device: ${d.label}'s uniform ${b.name} is not in a uniform buffer`);
        const view = new DataView(data.buffer, data.byteOffset + e.offset, 4 * fields.length);
        uniforms[b.name] = Object.fromEntries(
          fields.map(([name, type], i) => [
            name,
            type === 'f32' ? view.getFloat32(4 * i, true) : type === 'i32' ? view.getInt32(4 * i, true) : view.getUint32(4 * i, true),
          ]),
        );
      } else storage.push({ name: b.name, bytes: e.size });
    }
    return {
      label: d.label,
      kernel: p.kernel,
      entryPoint: p.entryPoint,
      workgroups: d.workgroups,
      workgroupSize: p.workgroupSize,
      constants: p.constants,
      uniforms,
      storage,
    };
  }
}
